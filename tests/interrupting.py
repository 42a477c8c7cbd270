"""Ctrl-C a real `genebench run` once its first result is written, then rerun it: what an interrupted user sees."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from genebench.wording import counted


def results(out: Path) -> list[Path]:
    """The result files of the headline scheme (the paper's folds; family folds are a run of their own, after it)."""
    return [p for p in out.rglob("*.json") if p.name != "model_meta.json" and "folds-family" not in p.parts]


def interrupt_then_resume(args: list[str], out: Path, cache: Path, n_tasks: int) -> None:
    """SIGINT `genebench run ARGS --out OUT` after its first result: it exits 130 in one line, keeps finished
    results whole and holds nothing; the rerun probes only the rest and leaves every kept file as it was."""
    command = [sys.executable, "-m", "genebench.cli", "run", *args, "--out", str(out)]
    env = {**os.environ, "GENEBENCH_CACHE": str(cache)}
    # a shell's background jobs inherit SIGINT ignored; a terminal's Ctrl-C reaches a default handler
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 180
    while not results(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "interrupted; finished results are kept, rerun the same command to resume." in err
    kept = {p: p.read_bytes() for p in results(out)}
    assert 1 <= len(kept) < n_tasks
    assert not list(out.rglob("*.tmp")) and not list(out.rglob(".genebench.lock"))  # nothing half-written or held
    rerun = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{counted(n_tasks - len(kept), 'task')} to score, {len(kept)} already done" in rerun.stderr
    for path, data in kept.items():  # complete when first written (its lift included): never probed or written again
        assert path.read_bytes() == data, path
    assert len(results(out)) == n_tasks
