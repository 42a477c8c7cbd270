"""Controls and lifts are recomputed from the data wherever results are published: `submit --data` and
`leaderboard build --data` refuse a result whose controls, lift or shortcut flag differ from what the data folder's
stored control predictions give, even when the edit keeps the file self-consistent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reliability_helpers import TASK, fails, paper_result_files, result_files, snapshot

from genebench.constants import SNAPSHOT_DIR


def _task_file(folder: Path, task: str) -> Path:
    return next(p for p in result_files(folder) if json.loads(p.read_text())["task"]["name"] == task)


def _edit(path: Path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def _build(cli, results: Path, tmp_path: Path):
    return cli("leaderboard", "build", results, "--out", tmp_path / "site", "--data", SNAPSHOT_DIR)


def test_honest_results_pass_the_data_check(cli, results_copy, tmp_path):
    document = json.loads(_task_file(results_copy, TASK).read_text())
    assert document["task"]["controls"]["name"] > 0.85 and document["lift"] < 0  # the truth: names beat random vectors
    outcome = _build(cli, results_copy, tmp_path)
    assert outcome.code == 0, outcome.err[-2000:]
    assert (tmp_path / "site" / "index.html").is_file()


def _controls_lowered_and_lift_matched(document: dict) -> None:
    """The issue's edit: every control set low and the lift adjusted to match, so the file is self-consistent."""
    document["task"]["controls"] = {name: 0.1 for name in document["task"]["controls"]}
    document["lift"] = round(document["scores"][document["main_score"]]["mean"] - 0.1, 6)


def test_edited_controls_with_a_matching_lift_are_refused_by_the_leaderboard(cli, results_copy, tmp_path):
    _edit(_task_file(results_copy, TASK), _controls_lowered_and_lift_matched)
    before = snapshot(results_copy)
    fails(_build(cli, results_copy, tmp_path), "leaderboard", "is recorded as 0.1, the data's stored control "
          "predictions give", "rerun `genebench run` against this data")
    assert snapshot(results_copy) == before and not (tmp_path / "site" / "index.html").exists()


def test_edited_controls_with_a_matching_lift_are_refused_by_submit(cli, results_copy):
    _edit(_task_file(results_copy, TASK), _controls_lowered_and_lift_matched)
    before = snapshot(results_copy)
    outcome = cli("submit", results_copy, "--repo", "org/results", "--dry-run", "--data", SNAPSHOT_DIR)
    assert outcome.code == 2 and "Traceback" not in outcome.err
    assert snapshot(results_copy) == before


def test_the_check_itself_names_the_control_that_differs(results_copy):
    from genebench.data import open_data
    from genebench.errors import SubmissionError
    from genebench.leaderboard import check_controls, validate_results

    _edit(_task_file(results_copy, TASK), _controls_lowered_and_lift_matched)
    runs = validate_results(results_copy)
    with pytest.raises(SubmissionError, match=r"control '(name|identity|random)' is recorded as 0\.1"):
        check_controls(runs, open_data(SNAPSHOT_DIR))


def test_a_partly_covered_result_is_checked_against_the_controls_on_its_rows(cli, tmp_path):
    import numpy as np

    from genebench.data import open_data
    from genebench.embeddings import GeneEmbeddings
    from genebench.model_info import ModelInfo

    genes = np.unique(open_data().load_task(TASK).entities.astype(str))[::2]  # half the genes
    table = tmp_path / "half.parquet"
    vectors = np.random.default_rng(0).normal(size=(len(genes), 8))
    GeneEmbeddings(genes, vectors, model=ModelInfo(id="lab/half", input="precomputed")).save(table)
    out = tmp_path / "out"
    made = cli("run", "--input", "precomputed", "--model", table, "--name", "lab/half", "--tasks", TASK, "--out", out)
    assert made.code == 0, made.err[-2000:]
    (path,) = paper_result_files(out)
    document = json.loads(path.read_text())
    assert 0 < document["coverage"]["fraction"] < 1 and document["lift"] is not None
    built = _build(cli, out, tmp_path)
    assert built.code == 0, built.err[-2000:]
    _edit(path, lambda d: d["diagnostics"]["controls_on_covered_rows"].update(name=0.1) or d.update(
        lift=round(d["scores"]["roc_auc"]["mean"] - max(d["diagnostics"]["controls_on_covered_rows"].values()), 6)))
    fails(_build(cli, out, tmp_path / "again"), "leaderboard", "control 'name' is recorded as 0.1")
