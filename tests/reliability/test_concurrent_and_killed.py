"""Concurrent and killed processes (real subprocesses): one writer per results folder, a shared cache that two
encoders fill at once, and a killed run that leaves only whole files and a lock the next run takes over."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from reliability_helpers import TASK, no_partial_files, paper_result_files, result_files

from genebench.atomic import TMP_SUFFIX
from genebench.lock import LOCK_FILE, folder_lock

TASKS = [TASK, "N1 targets", "N1 network", "Pathways"]


def _genebench(*args: str | Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "genebench.cli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "GENEBENCH_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(Path.cwd())}


def _wait_for(path: Path, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_a_second_run_into_the_same_folder_fails_at_once(tmp_path):
    out, env = tmp_path / "results", _env(tmp_path)
    with folder_lock(out, what="genebench run"):  # a live run (this process) holds the folder
        second = _genebench("run", "--input", "random", "--tasks", TASK, "--out", out, env=env)
        _, err = second.communicate(timeout=120)
    assert second.returncode == 2 and "Traceback" not in err
    assert f"folder '{out}' is in use by another genebench run (process {os.getpid()}" in err.splitlines()[-1]
    assert not result_files(out) and not (out / LOCK_FILE).exists()


@pytest.mark.slow
def test_two_runs_at_once_one_fails_the_other_completes(tmp_path):
    out, env = tmp_path / "results", _env(tmp_path)
    first = _genebench("run", "--input", "random", "--tasks", *TASKS, "--out", out, env=env)
    _wait_for(out / LOCK_FILE, first)
    second = _genebench("run", "--input", "random", "--name", "lab/other", "--tasks", TASK, "--out", out, env=env)
    _, second_err = second.communicate(timeout=120)
    _, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err[-1500:]
    assert second.returncode == 2 and "is in use by another genebench run" in second_err.splitlines()[-1]
    assert len(paper_result_files(out)) == len(TASKS) and len(result_files(out)) == 2 * len(TASKS)  # both schemes
    assert (out / "run_config.yaml").is_file()
    assert "lab/other" not in (out / "run_config.yaml").read_text()
    no_partial_files(out)


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    out = tmp_path / "results"
    out.mkdir()
    (out / LOCK_FILE).write_text(json.dumps({"pid": int(dead.stdout), "host": socket.gethostname(),
                                             "what": "genebench run"}))
    run = _genebench("run", "--input", "random", "--tasks", TASK, "--out", out, env=_env(tmp_path))
    _, err = run.communicate(timeout=300)
    assert run.returncode == 0, err[-800:]
    assert f"removing a stale lock left by process {int(dead.stdout)}, which no longer runs" in err
    assert len(paper_result_files(out)) == 1 and len(result_files(out)) == 2 and not (out / LOCK_FILE).exists()


def test_a_write_cut_short_under_the_lock_leaves_no_temporary(tmp_path):
    """Ctrl-C just after a write made its temporary (before it could take charge of it): releasing the folder
    removes the temporary with the lock."""
    out = tmp_path / "out"
    (out / "model").mkdir(parents=True)
    with pytest.raises(KeyboardInterrupt), folder_lock(out):
        handle, name = tempfile.mkstemp(dir=out / "model", prefix=".task.json.", suffix=TMP_SUFFIX)
        os.close(handle)
        raise KeyboardInterrupt
    assert not Path(name).exists() and not (out / LOCK_FILE).exists()


def test_two_encoders_of_one_model_share_a_cache(tmp_path):
    env = _env(tmp_path)
    runs = [_genebench("encode", "--input", "random", "--family", "humantfs", "genecorpus", "--out",
                       tmp_path / f"e{i}.parquet", env=env) for i in range(2)]
    outcomes = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-800:] for _, err in outcomes]
    first, second = (pq.read_table(tmp_path / f"e{i}.parquet") for i in range(2))
    assert first.num_rows > 1000 and first.select(["symbol", "vector"]).equals(second.select(["symbol", "vector"]))
    no_partial_files(tmp_path / "cache")


@pytest.mark.slow
def test_a_killed_run_leaves_whole_files_and_the_rerun_resumes(tmp_path):
    out, env = tmp_path / "results", _env(tmp_path)
    run = _genebench("run", "--input", "random", "--family", "reactome", "humantfs", "genecorpus", "--out", out,
                     env=env)
    deadline = time.monotonic() + 120
    while not result_files(out) and time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        time.sleep(0.02)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=60)
    kept = {path: path.read_bytes() for path in result_files(out)}
    assert kept and all(json.loads(data) for data in kept.values())  # whole JSON documents only
    rerun = _genebench("run", "--input", "random", "--family", "reactome", "humantfs", "genecorpus", "--out", out,
                       env=env)
    _, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err[-1500:]
    assert "removing a stale lock" in err or not kept
    assert all(path.read_bytes() == data for path, data in kept.items())
    assert f"{len(kept)} already done" in err
    no_partial_files(out)
