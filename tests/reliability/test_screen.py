"""A readable screen: every line `run`, `report` and `compare` print over every bundled task fits 200 characters,
and the shortcut line counts tasks by control instead of listing them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from genebench.constants import SNAPSHOT_DIR
from genebench.data import BenchmarkData
from genebench.report import MAX_LINE

pytestmark = pytest.mark.slow

FEW_TASKS = ("TF vs non-TF", "dosage sensitive vs insensitive TF", "HLA class I vs class II")
LONG_NAMES = ("a-rather-long-organisation-name/an-even-longer-model-name-for-the-screen-test-v2",
              "a-rather-long-organisation-name/an-even-longer-model-name-for-the-screen-test-v3")


def _table(path: Path, seed: int) -> Path:
    """A seeded 8-d table over every approved symbol of the bundled HGNC table, as a CSV (a precomputed input)."""
    symbols = BenchmarkData(SNAPSHOT_DIR).hgnc()["symbol"].astype(str).to_numpy()
    vectors = np.random.default_rng(seed).normal(size=(len(symbols), 8)).round(4)
    frame = pd.DataFrame(vectors, columns=[f"d{i}" for i in range(8)]).assign(symbol=symbols)
    frame[["symbol", *frame.columns[:8]]].to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def screens(tmp_path_factory) -> dict[str, str]:
    """What `run` prints over every bundled task (and a second model over a few), and what `report` and `compare`
    print over both."""
    import os

    from genebench.cli import main

    root = tmp_path_factory.mktemp("screen")
    before = os.environ.get("GENEBENCH_CACHE")
    os.environ["GENEBENCH_CACHE"] = str(root / "cache")
    printed: dict[str, str] = {}
    try:
        for i, (name, tasks) in enumerate(zip(LONG_NAMES, ([], ["--tasks", *FEW_TASKS]))):
            table = _table(root / f"t{i}.csv", i)
            printed[f"run {i}"] = _printed(main, ["run", "--input", "precomputed", "--model", table, "--name", name,
                                                  *tasks, "--out", root / f"r{i}"])
        printed["report"] = _printed(main, ["report", root / "r0", root / "r1", "--out", root / "report"])
        printed["report flagged"] = _printed(main, ["report", root / "r0", root / "r1", "--out", root / "report2",
                                                    "--exclude-flagged"])
        printed["compare"] = _printed(main, ["compare", root / "r0", root / "r1", "--a", LONG_NAMES[0], "--b",
                                             LONG_NAMES[1]])
    finally:
        os.environ.pop("GENEBENCH_CACHE") if before is None else os.environ.__setitem__("GENEBENCH_CACHE", before)
    return printed


def _printed(main, args: list) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(a) for a in args]) == 0
    return out.getvalue()


@pytest.mark.parametrize("command", ["run 0", "run 1", "report", "report flagged", "compare"])
def test_every_printed_line_fits(screens, command):
    lines = screens[command].splitlines()
    assert len(lines) > 5
    too_long = [line for line in lines if len(line) > MAX_LINE]
    assert not too_long, f"{len(too_long)} lines over {MAX_LINE} characters, the first: {too_long[0][:80]}..."


def test_the_shortcut_line_counts_by_control_and_points_to_the_list(screens):
    lines = screens["run 0"].splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("shortcut-solvable")]
    data = BenchmarkData(SNAPSHOT_DIR)
    for scheme in ("paper", "family"):
        flagged = [meta for meta in data.tasks(scheme) if meta.is_shortcut_solvable]
        by_name = sum(meta.best_control[0] == "name" for meta in flagged)
        assert f"{len(flagged)} tasks under {scheme} folds (name {by_name}" in lines[at]
    assert lines[at + 1].startswith("`genebench tasks --flagged [--scheme family]` lists them")
