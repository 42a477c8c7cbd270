"""A score whose probe did not converge is never shown as a normal one: its result records `converged: false`,
`report` marks it and leaves it out of the summaries, `submit` and the leaderboard refuse it, a hand-set flag that
disagrees with the diagnostics is refused, and derived tasks inherit their parent's status. Scaled tables converge."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from reliability_helpers import TASK, fails, no_partial_files, paper_result_files, snapshot


def _read(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def stopped_early(tmp_path_factory) -> Path:
    """A real run whose probes stop after one iteration (probe max_iter 1): unconverged results."""
    import os

    from genebench.cli import main

    root = tmp_path_factory.mktemp("stopped-early")
    (root / "model.yaml").write_text("input: random\nprobe:\n  max_iter: 1\n")
    os.environ["GENEBENCH_CACHE"], before = str(root / "cache"), os.environ.get("GENEBENCH_CACHE")
    try:
        assert main(["run", "--config", str(root / "model.yaml"), "--tasks", TASK, "--out", str(root / "out")]) == 0
    finally:
        os.environ.pop("GENEBENCH_CACHE") if before is None else os.environ.__setitem__("GENEBENCH_CACHE", before)
    return root / "out"


def test_a_run_that_stops_early_records_it(stopped_early):
    (document,) = [_read(p) for p in paper_result_files(stopped_early)]
    assert document["converged"] is False and document["diagnostics"]["n_not_converged"] > 0
    no_partial_files(stopped_early)


def test_submit_refuses_an_unconverged_score(cli, stopped_early, tmp_path):
    before = snapshot(stopped_early)
    outcome = cli("submit", stopped_early, "--repo", "org/results", "--dry-run", "--allow-unverified-task-set")
    fails(outcome, "submit", "its probe did not converge", "max_iter")
    assert snapshot(stopped_early) == before


def test_the_leaderboard_refuses_an_unconverged_score(cli, stopped_early, tmp_path):
    before = snapshot(stopped_early)
    fails(cli("leaderboard", "build", stopped_early, "--out", tmp_path / "site"), "leaderboard",
          "its probe did not converge")
    assert snapshot(stopped_early) == before and not (tmp_path / "site" / "index.html").exists()


def test_report_of_only_unconverged_scores_says_so(cli, stopped_early, tmp_path):
    before = snapshot(stopped_early)
    fails(cli("report", stopped_early, "--out", tmp_path / "report"), "report", "its probe did not converge")
    assert snapshot(stopped_early) == before


def _mark_unconverged(path: Path, *, flag: bool = False) -> None:
    document = _read(path)
    document["diagnostics"]["n_not_converged"] = 3
    document["converged"] = flag
    path.write_text(json.dumps(document))


def test_report_marks_an_unconverged_score_and_leaves_it_out_of_summaries(cli, results_copy, tmp_path):
    first, second = paper_result_files(results_copy)
    _mark_unconverged(first)
    task = _read(first)["task"]["name"]
    outcome = cli("report", results_copy, "--out", tmp_path / "report")
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err[-2000:]
    assert "1 score is not the probe's optimum (it did not converge)" in outcome.out and f"'{task}'" in outcome.out
    per_task = (tmp_path / "report" / "per_task.csv").read_text() if (tmp_path / "report" / "per_task.csv").exists() \
        else (tmp_path / "report" / "report.html").read_text()
    assert "not converged" in per_task
    assert "(1 task)" in outcome.out  # the summary holds the converged task alone


def test_compare_leaves_an_unconverged_score_out(cli, results_copy, tmp_path):
    from genebench.report import compare
    from genebench.results import load_results

    first, _ = paper_result_files(results_copy)
    _mark_unconverged(first)
    frame = load_results(results_copy)
    assert frame.loc[frame["is_main"], "converged"].tolist().count(False) == 1
    other = frame.assign(model="other/model", mean=frame["mean"] * 0.5)
    import pandas as pd

    comparison = compare(pd.concat([frame, other], ignore_index=True), "genebench/random-256", "other/model")
    assert comparison.n_tasks == 1


@pytest.mark.parametrize("reader", ["report", "submit", "leaderboard"])
def test_a_hand_set_flag_that_disagrees_with_the_diagnostics_is_refused(reader, cli, results_copy, tmp_path):
    _mark_unconverged(paper_result_files(results_copy)[0], flag=True)
    before = snapshot(results_copy)
    args = {"report": ("report", results_copy, "--out", tmp_path / "r"),
            "submit": ("submit", results_copy, "--repo", "org/x", "--dry-run", "--allow-unverified-task-set"),
            "leaderboard": ("leaderboard", "build", results_copy, "--out", tmp_path / "site")}[reader]
    fails(cli(*args), reader, "converged True disagrees with diagnostics.n_not_converged 3")
    assert snapshot(results_copy) == before


def test_derived_tasks_inherit_their_parents_status(cli, tmp_path):
    from genebench.data import open_data

    children = [m.name for m in open_data().tasks() if m.parent == "Protein class"][:2]
    (tmp_path / "model.yaml").write_text("input: random\nprobe:\n  max_iter: 1\n")
    out = tmp_path / "out"
    outcome = cli("run", "--config", tmp_path / "model.yaml", "--tasks", "Protein class", *children, "--out", out)
    assert outcome.code == 0, outcome.err[-2000:]
    documents = {d["task"]["name"]: d for d in map(_read, paper_result_files(out))}
    assert documents["Protein class"]["converged"] is False
    for child in children:
        assert "reused the fit" in documents[child]["diagnostics"]["solver"]
        assert documents[child]["converged"] is False


@pytest.mark.parametrize("scale", [1e-3, 1e4, 1e9])
def test_a_scaled_table_converges_on_every_fold(scale, cli, tmp_path):
    from genebench.data import open_data
    from genebench.embeddings import GeneEmbeddings
    from genebench.model_info import ModelInfo

    genes = np.unique(open_data().load_task(TASK).entities.astype(str))
    vectors = np.random.default_rng(0).normal(size=(len(genes), 8)) * scale
    table = tmp_path / "table.parquet"
    GeneEmbeddings(genes, vectors, model=ModelInfo(id="lab/scaled", input="precomputed")).save(table)
    out = tmp_path / "out"
    outcome = cli("run", "--input", "precomputed", "--model", table, "--name", "lab/scaled", "--tasks", TASK,
                  "--out", out)
    assert outcome.code == 0, outcome.err[-2000:]
    (document,) = [_read(p) for p in paper_result_files(out)]
    assert document["converged"] is True and document["diagnostics"]["n_not_converged"] == 0
    assert 0.4 < document["scores"]["roc_auc"]["mean"] < 0.6  # random vectors: chance, not a stuck 0.500 or worse
