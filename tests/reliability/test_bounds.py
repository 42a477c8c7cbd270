"""Bounds: Ray addresses that lead nowhere, huge bootstraps, a model compared with itself, stale cache files, a
wrong `encode --out`, every selected task flagged, and a script inside a figure: each ends in one line (or is
cleaned), never in a hang, a traceback or a loss."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import TASK, fails, no_partial_files, paper_result_files, result_files, snapshot

pytest.importorskip("ray", reason="the Ray engine's tests need the ray extra")


@pytest.mark.parametrize("address", ["bogus:1234", "127.0.0.1:1", "ray://bogus:10001", "nonsense"])
def test_a_ray_address_that_leads_nowhere_fails_in_one_line(address, cli, tmp_path):
    import ray

    if ray.is_initialized():  # an earlier test's in-process Ray would answer for any address; the CLI starts fresh
        ray.shutdown()
    out = tmp_path / "out"
    start = time.perf_counter()
    outcome = cli("run", "--input", "random", "--tasks", TASK, "--out", out, "--engine", "ray", "--ray-address",
                  address)
    assert time.perf_counter() - start < 120
    fails(outcome, "run", "--ray-address", address)
    assert not result_files(out)
    no_partial_files(tmp_path)


def test_an_address_that_answers_but_is_no_ray_cluster_times_out():
    """A port that accepts connections and never speaks Ray: Ray would retry forever."""
    script = (
        "import socket, sys\n"
        "from genebench.distributed import RayEngine\n"
        "from genebench.errors import GenebenchError\n"
        "server = socket.socket(); server.bind(('127.0.0.1', 0)); server.listen()\n"
        "engine = RayEngine(f'127.0.0.1:{server.getsockname()[1]}', connect_timeout=5)\n"
        "try:\n    engine.connect()\nexcept GenebenchError as exc:\n    print(exc); sys.exit(2)\n"
    )
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert time.perf_counter() - start < 90
    assert done.returncode == 2, done.stderr[-2000:]
    assert "no Ray cluster answered within 5 s" in done.stdout and "Traceback" not in done.stderr


def test_compare_refuses_a_bootstrap_that_would_not_fit_in_memory(cli, results_copy, tmp_path):
    other = tmp_path / "other"
    made = cli("run", "--input", "random", "--tasks", TASK, "N1 targets", "--name", "lab/other", "--out", other)
    assert made.code == 0
    start = time.perf_counter()
    outcome = cli("compare", results_copy, other, "--a", "genebench/random-256", "--b", "lab/other", "--n-boot",
                  "1000000000")
    line = fails(outcome, "compare", "--n-boot 1000000000: needs about", "GiB", "pass --n-boot")
    assert time.perf_counter() - start < 30 and len(line) <= 250
    fine = cli("compare", results_copy, other, "--a", "genebench/random-256", "--b", "lab/other", "--n-boot", "100000")
    assert fine.code == 0 and "95% bootstrap CI" in fine.out


def test_compare_refuses_a_model_against_itself(cli, results_copy):
    fails(cli("compare", results_copy, "--a", "genebench/random-256", "--b", "genebench/random-256"), "compare",
          "expected two different models", "'genebench/random-256' as both --a and --b")


def test_stale_temporary_cache_files_are_removed_and_fresh_ones_kept(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("GENEBENCH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert cli("run", "--input", "random", "--tasks", TASK, "--out", out).code == 0
    (cache_file,) = [p for p in (tmp_path / "cache").rglob("*.parquet")]
    stale, fresh = cache_file.parent / f".{cache_file.name}.abc123.tmp", cache_file.parent / f".{cache_file.name}.x.tmp"
    stale.write_bytes(b"killed mid-write")
    fresh.write_bytes(b"being written now")
    os.utime(stale, (time.time() - 86400, time.time() - 86400))
    kept = {name: digest for name, digest in snapshot(out).items() if name.endswith(".json")}
    assert cli("run", "--input", "random", "--tasks", TASK, "--out", out).code == 0
    assert not stale.exists() and fresh.exists() and cache_file.exists()
    assert {name: digest for name, digest in snapshot(out).items() if name.endswith(".json")} == kept


@pytest.mark.parametrize("name", ["x.csv", "table", "vectors.parquet.bak"])
def test_encode_out_must_be_a_parquet_file(name, cli, tmp_path):
    outcome = cli("encode", "--input", "random", "--tasks", TASK, "--out", tmp_path / name)
    fails(outcome, "encode", "expected a file name ending in .parquet", f"found '{tmp_path / name}'")
    assert not list(tmp_path.iterdir())


def test_run_with_every_selected_task_flagged_and_excluded(cli, tmp_path):
    out = tmp_path / "out"
    outcome = cli("run", "--input", "random", "--tasks", TASK, "--out", out, "--exclude-flagged")
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err[-2000:]
    assert "left out of every summary, under both schemes (--exclude-flagged" in outcome.out
    assert len(paper_result_files(out)) == 1
    no_partial_files(out)


@pytest.mark.parametrize("command", ["report", "compare"])
def test_report_and_compare_with_flagged_tasks_excluded(command, cli, results_copy, tmp_path):
    """The shared results hold one flagged task (TF vs non-TF) and one that is not (N1 targets): --exclude-flagged
    summarises the second alone, and succeeds."""
    from genebench.results import load_results

    frame = load_results(results_copy).drop_duplicates(["task", "scheme"])
    assert dict(zip(frame["task"], frame["is_flagged"])) == {TASK: True, "N1 targets": False}
    other = tmp_path / "other"
    assert cli("run", "--input", "random", "--name", "other/x", "--tasks", TASK, "N1 targets", "--scheme", "paper",
               "--out", other).code == 0
    before = snapshot(results_copy), snapshot(other)
    args = ("report", results_copy, "--out", tmp_path / "r") if command == "report" else \
        ("compare", results_copy, other, "--a", "genebench/random-256", "--b", "other/x", "--scheme", "paper")
    outcome = cli(*args, "--exclude-flagged")
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err[-2000:]
    if command == "report":
        overall = outcome.out.split("\n\n")[0]  # the paper-fold table: N1 targets alone
        assert "(1 task)" in overall and "| 1 of " in overall, overall
    else:
        assert "N1 targets" in outcome.out and f"| {TASK}" not in outcome.out, outcome.out[-2000:]
    assert (snapshot(results_copy), snapshot(other)) == before


def test_report_and_compare_when_only_flagged_tasks_were_run(cli, tmp_path):
    out = tmp_path / "out"
    assert cli("run", "--input", "random", "--tasks", TASK, "--out", out).code == 0
    before = snapshot(out)
    fails(cli("report", out, "--out", tmp_path / "r", "--exclude-flagged"), "report",
          "--exclude-flagged: every one of the 1 tasks here is shortcut-solvable")
    fails(cli("compare", out, "--a", "genebench/random-256", "--b", "x/y", "--exclude-flagged"), "compare",
          "--exclude-flagged: every one of the 1 tasks here is shortcut-solvable")
    assert not (tmp_path / "r").exists()
    assert snapshot(out) == before


SCRIPTED_SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="alert(1)">'
                b'<script>alert(document.cookie)</script><rect width="10" height="10"/>'
                b'<a href="javascript:alert(2)"><text>x</text></a></svg>')


def test_a_script_inside_a_figure_never_reaches_the_site(cli, results_copy, tmp_path):
    (results_copy / "figures").mkdir(exist_ok=True)
    (results_copy / "figures" / "evil.svg").write_bytes(SCRIPTED_SVG)
    outcome = cli("leaderboard", "build", results_copy, "--out", tmp_path / "site")
    assert outcome.code == 0, outcome.err[-2000:]
    published = list((tmp_path / "site" / "figures").glob("*evil*"))
    assert published, "the cleaned figure is published"
    text = b"".join(p.read_bytes() for p in published).lower()
    assert b"<script" not in text and b"onload" not in text and b"javascript:" not in text
    assert b"<rect" in text


def test_a_figure_that_is_not_svg_is_dropped_not_published(cli, results_copy, tmp_path, caplog):
    (results_copy / "figures").mkdir(exist_ok=True)
    (results_copy / "figures" / "page.svg").write_bytes(b"<html><script>alert(1)</script></html>")
    outcome = cli("leaderboard", "build", results_copy, "--out", tmp_path / "site")
    assert outcome.code == 0 and "Traceback" not in outcome.err
    assert not list((tmp_path / "site" / "figures").glob("*page*"))
    assert "Dropped figure" in caplog.text and "not an SVG" in caplog.text


def test_the_results_table_has_numeric_dtypes(results_copy):
    import numpy as np

    from genebench.results import drop_flagged, load_results

    frame = load_results(results_copy)
    for column in ("mean", "std", "coverage", "lift", "data_tasks"):
        assert frame[column].dtype == np.float64, column
    for column in ("is_main", "is_flagged", "converged"):
        assert frame[column].dtype == bool, column
    every_flagged = drop_flagged(frame.assign(is_flagged=True))
    assert every_flagged.empty and every_flagged["data_tasks"].dtype == np.float64
