"""Added over names' draws of two bootstrap methods (an older genebench's gene bootstrap beside the family bootstrap
with refitted slopes) are never averaged or paired: `report` and `compare` refuse them in one line and write
nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from reliability_helpers import TASK, fails, result_files, snapshot

OTHER = "dosage sensitive vs insensitive TF"
"""A second small single-gene task, so a model has added over names on two tasks under family folds."""
NEW = "family bootstrap, slopes refitted"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> Path:
    """Family-fold results of two random models (256 and 64 dimensions) on `TASK` and `OTHER`, made once."""
    import os

    from genebench.cli import main

    root = tmp_path_factory.mktemp("bootstrap-methods")
    before = os.environ.get("GENEBENCH_CACHE")
    os.environ["GENEBENCH_CACHE"] = str(root / "cache")
    try:
        for dim in ("256", "64"):
            assert main(["run", "--input", "random", "--dim", dim, "--tasks", TASK, OTHER, "--scheme", "family",
                         "--out", str(root / f"random-{dim}")]) == 0
    finally:
        os.environ.pop("GENEBENCH_CACHE") if before is None else os.environ.__setitem__("GENEBENCH_CACHE", before)
    return root


@pytest.fixture
def runs(two_runs, tmp_path) -> tuple[Path, Path]:
    """Private copies of the two runs' folders."""
    copies = tuple(tmp_path / name for name in ("random-256", "random-64"))
    for copy in copies:
        shutil.copytree(two_runs / copy.name, copy)
    return copies


def _as_older(path: Path) -> None:
    """Make `path` a result written before the method was recorded (it then reads as the gene bootstrap)."""
    document = json.loads(path.read_text())
    assert document["added_over_names"].pop("method") == NEW
    path.write_text(json.dumps(document))


def _added_files(folder: Path) -> list[Path]:
    return [p for p in result_files(folder) if json.loads(p.read_text()).get("added_over_names", {}).get("draws")]


def test_report_refuses_one_model_whose_draws_mix_two_methods(cli, runs, tmp_path):
    ours = runs[0]
    files = _added_files(ours)
    assert len(files) == 2
    _as_older(files[0])
    before = snapshot(ours)
    fails(cli("report", ours, "--out", tmp_path / "report"), "report",
                 "added over names: draws of two bootstrap methods cannot be averaged or paired",
                 "'family bootstrap, slopes refitted' in 1 result", "'gene bootstrap' in 1 result",
                 "--overwrite always")
    assert snapshot(ours) == before and not (tmp_path / "report").exists()


def test_compare_refuses_to_pair_draws_of_two_methods(cli, runs, tmp_path):
    ours, older = runs
    agreed = cli("compare", ours, older)  # both of one method: paired
    assert agreed.code == 0, agreed.err[-2000:]
    assert "added over names, A - B (paired by gene)" in agreed.out
    for path in _added_files(older):
        _as_older(path)
    before = snapshot(tmp_path)
    fails(cli("compare", ours, older), "compare",
          "added over names: draws of two bootstrap methods cannot be averaged or paired",
          "'family bootstrap, slopes refitted' in 2 results, e.g. genebench/random-256 ",
          "'gene bootstrap' in 2 results, e.g. genebench/random-64 ")
    assert snapshot(tmp_path) == before


def test_results_of_one_older_method_are_still_reported(cli, runs, tmp_path):
    for path in _added_files(runs[0]):
        _as_older(path)
    outcome = cli("report", runs[0], "--out", tmp_path / "report")
    assert outcome.code == 0, outcome.err[-2000:]
    assert (tmp_path / "report" / "report.html").is_file()
