"""Comparable by construction: report, compare and the leaderboard rank only complete runs of one data revision."""

from __future__ import annotations

from pathlib import Path

from leaderboard_helpers import MODELS, PROVENANCE, TASKS, write_model

from genebench.cli import main
from genebench.comparability import data_hash_of
from genebench.leaderboard import leaderboard_data, validate_results
from genebench.report import category_table, compare
from genebench.results import load_results

FULL_PROVENANCE = {**PROVENANCE, "n_tasks": len(TASKS)}
PARTIAL = "tiny-org/two-task-model"


def write_results(root: Path, *, provenance: dict = FULL_PROVENANCE) -> Path:
    """Three complete runs (AUC ~0.70-0.80) and a partial 2-task run that scores far higher (~0.95)."""
    for model_id, (adapter, n_parameters, level) in MODELS.items():
        write_model(root, model_id, adapter=adapter, n_parameters=n_parameters, level=level, provenance=provenance)
    write_model(root, PARTIAL, level=0.95, tasks=TASKS[:2], provenance=provenance)
    return root


def test_a_partial_run_never_outranks_a_complete_one_in_the_report(tmp_path) -> None:
    table = category_table(load_results(write_results(tmp_path / "results")))
    assert table["model"].tolist()[:3] == list(MODELS)  # the complete runs, by mean AUC
    assert table["rank (paper folds)"].tolist() == [1, 2, 3, "–"]
    partial = table.set_index("model").loc[PARTIAL]
    assert partial["tasks (paper folds)"] == f"2 of {len(TASKS)}"
    assert partial["note"] == f"partial: 2 of {len(TASKS)} tasks, not ranked"
    assert table.set_index("model").loc[next(iter(MODELS)), "tasks (paper folds)"] == f"{len(TASKS)} of {len(TASKS)}"
    assert set(table["coverage"]) == {"100.0%"}


def test_a_partial_run_is_unranked_on_the_leaderboard(tmp_path) -> None:
    data = leaderboard_data(validate_results(write_results(tmp_path / "results")))
    models = {m["id"]: m for m in data["models"]}
    assert [m["ranked"] for m in models.values()] == [m != PARTIAL for m in models]
    assert models[PARTIAL]["n_tasks"] == 2 and models[PARTIAL]["n_expected"] == len(TASKS)
    assert models[PARTIAL]["note"].startswith("partial: 2 of 9 tasks")
    assert data["data_hashes"] == [PROVENANCE["data_hash"]] == [data_hash_of(FULL_PROVENANCE)]


def test_without_a_recorded_task_count_the_runs_together_define_the_task_set(tmp_path) -> None:
    table = category_table(load_results(write_results(tmp_path / "results", provenance=PROVENANCE)))
    assert table["rank (paper folds)"].tolist() == [1, 2, 3, "–"]


def test_complete_runs_of_another_data_revision_are_shown_apart(tmp_path) -> None:
    root = write_results(tmp_path / "results")
    other = {**FULL_PROVENANCE, "data_hash": "0000other0000"}
    write_model(tmp_path / "other", "other-org/model", level=0.99, provenance=other)
    table = category_table(load_results([root, tmp_path / "other"])).set_index("model")
    assert table.loc["other-org/model", "rank (paper folds)"] == "–"
    note = table.loc["other-org/model", "note"]
    assert note == f"data revision 0000other0000, not ranked against {PROVENANCE['data_hash']}"


def test_a_model_given_twice_is_counted_once_with_a_note(tmp_path, capsys, caplog) -> None:
    root = write_results(tmp_path / "results")
    assert main(["report", str(root), str(root), "--out", str(tmp_path / "report")]) == 0
    assert f"| {len(TASKS)} of {len(TASKS)}" in capsys.readouterr().out
    assert caplog.text.count("was given more than once") == len(MODELS) + 1
    results = load_results([root, root])
    assert len(results) == len(load_results(root))
    comparison = compare(results, next(iter(MODELS)), PARTIAL, n_boot=100)
    assert comparison.n_tasks == 2
    assert f"B: 2 of {len(TASKS)} tasks (paper folds), coverage 100.0% (partial" in comparison.to_text()
