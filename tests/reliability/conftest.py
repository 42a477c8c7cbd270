"""Fixtures of the reliability suite: the real CLI in this process, a copy of the snapshot, a real results folder."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability_helpers import TASK, Outcome

from genebench.constants import SNAPSHOT_DIR


@pytest.fixture
def cli(capsys) -> Callable[..., Outcome]:
    """Run `genebench ARGS` in this process (no traceback reaches the user without --debug)."""
    from genebench.cli import main

    def run(*args: str | Path) -> Outcome:
        try:
            code = main([str(a) for a in args])
        except SystemExit as exit_:  # argparse's usage errors
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return run


@pytest.fixture
def data_copy(tmp_path) -> Path:
    """A private copy of the bundled snapshot, to tamper with."""
    target = tmp_path / "data"
    shutil.copytree(SNAPSHOT_DIR, target)
    return target


@pytest.fixture(scope="session")
def random_results(tmp_path_factory) -> Path:
    """A results folder from a real `genebench run --input random` on one task (made once, copied by tests)."""
    import os

    from genebench.cli import main

    root = tmp_path_factory.mktemp("random-results")
    out, before = root / "results", os.environ.get("GENEBENCH_CACHE")
    os.environ["GENEBENCH_CACHE"] = str(root / "cache")
    try:
        assert main(["run", "--input", "random", "--tasks", TASK, "N1 targets", "--out", str(out)]) == 0
    finally:
        os.environ.pop("GENEBENCH_CACHE") if before is None else os.environ.__setitem__("GENEBENCH_CACHE", before)
    return out


@pytest.fixture
def results_copy(random_results, tmp_path) -> Path:
    """A private copy of `random_results`."""
    target = tmp_path / "results"
    shutil.copytree(random_results, target)
    return target
