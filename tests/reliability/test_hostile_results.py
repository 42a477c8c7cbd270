"""Hostile or mixed results folders: no edited, impossible or mixed score reaches a report, a submission or the
leaderboard, and nothing in the folder is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reliability_helpers import TASK, fails, no_partial_files, paper_result_files, result_files, snapshot


def _edit_scores(folder: Path, value: float) -> None:
    for path in result_files(folder):
        document = json.loads(path.read_text())
        for score in document["scores"].values():
            score["folds"] = [value] * len(score["folds"])
            score["mean"], score["std"] = value, 0.0
        path.write_text(json.dumps(document))


COMMANDS = {
    "report": (("report", "{results}", "--out", "{tmp}/report"), "report"),
    "submit": (("submit", "{results}", "--repo", "org/results", "--dry-run", "--allow-unverified-task-set"),
               "submit"),
    "leaderboard": (("leaderboard", "build", "{results}", "--out", "{tmp}/site"), "leaderboard"),
}
EDITS = {"AUC 5.0 on every fold": (5.0, "outside its range [0.0, 1.0]"),
         "AUC -0.2 on every fold": (-0.2, "outside its range"),
         "NaN on every fold": (float("nan"), "not a finite number")}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("edit", EDITS)
def test_impossible_scores_are_refused_everywhere(edit, command, cli, results_copy, tmp_path):
    value, fragment = EDITS[edit]
    _edit_scores(results_copy, value)
    before = snapshot(results_copy)
    args, name = COMMANDS[command]
    outcome = cli(*[a.format(results=results_copy, tmp=tmp_path) for a in args])
    fails(outcome, name, fragment)
    assert snapshot(results_copy) == before
    assert not (tmp_path / "site" / "index.html").exists() and not (tmp_path / "report" / "report.html").exists()


@pytest.mark.parametrize("repo", ["../x", "org/../x", "x", "org/name/extra", "/abs/path"])
def test_submit_repo_must_be_a_hub_id(repo, cli, results_copy):
    outcome = cli("submit", results_copy, "--repo", repo, "--dry-run")
    assert outcome.code == 2 and "Traceback" not in outcome.err
    assert "expected a Hub repository id 'org/name'" in outcome.err.splitlines()[-1]


def test_an_unrelated_json_is_refused_before_probing(cli, results_copy, tmp_path):
    (results_copy / "notes").mkdir()
    (results_copy / "notes" / "extra" ).mkdir()
    (results_copy / "notes" / "extra" / "plan.json").write_text('{"todo": 1}')
    before = snapshot(results_copy)
    outcome = cli("run", "--input", "random", "--tasks", TASK, "Pathways", "--out", results_copy)
    fails(outcome, "run", "'notes/extra/plan.json' is not a genebench result", "move it out of the folder")
    assert "probing" not in outcome.err and snapshot(results_copy) == before


def test_a_leaderboard_site_inside_the_results_does_not_break_the_next_report(cli, results_copy, tmp_path):
    assert cli("leaderboard", "build", results_copy, "--out", results_copy / "site").code == 0
    assert (results_copy / "site" / "index.html").is_file()
    outcome = cli("report", results_copy, "--out", tmp_path / "report")
    assert outcome.code == 0, outcome.err[-1000:]
    assert (tmp_path / "report" / "report.html").is_file()


def test_runs_with_other_probe_settings_are_never_mixed(cli, tmp_path):
    out = tmp_path / "results"
    assert cli("run", "--input", "random", "--tasks", TASK, "N1 targets", "--out", out, "--C", "0.01",
               "--scheme", "paper").code == 0
    before = snapshot(out)
    outcome = cli("run", "--input", "random", "--tasks", TASK, "--out", out, "--C", "100", "--scheme", "paper")
    fails(outcome, "run", "holds 2 results of genebench/random-256 from another run", "probe C 100.0 vs 0.01",
          "--overwrite always")
    assert snapshot(out) == before
    replaced = cli("run", "--input", "random", "--tasks", TASK, "--out", out, "--C", "100", "--overwrite", "always",
                   "--scheme", "paper")
    assert replaced.code == 0
    assert [json.loads(p.read_text())["probe"]["C"] for p in paper_result_files(out)] == [100.0]
    no_partial_files(out)


def test_a_folder_mixing_two_runs_is_refused_by_report_and_compare(cli, results_copy, tmp_path):
    first = result_files(results_copy)[0]
    document = json.loads(first.read_text())
    document["probe"]["C"] = 0.5
    first.write_text(json.dumps(document))
    fails(cli("report", results_copy, "--out", tmp_path / "report"), "report", "has results of two runs",
          "probe C", "a summary would mix them")
    fails(cli("compare", results_copy, "--a", "x", "--b", "y"), "compare", "has results of two runs")


def test_another_data_revision_is_never_mixed(cli, results_copy, data_copy, tmp_path):
    from genebench.data import read_manifest
    from genebench.data_folder import commit_manifest

    manifest = read_manifest(data_copy)
    (data_copy / "descriptions" / "refseq.parquet").unlink()
    manifest["files"].pop("descriptions/refseq.parquet")
    commit_manifest(data_copy, manifest)  # a different, valid data revision
    before = snapshot(results_copy)
    outcome = cli("run", "--input", "random", "--data", data_copy, "--tasks", TASK, "--out", results_copy)
    fails(outcome, "run", "from another run", "data revision")
    assert snapshot(results_copy) == before


def test_another_model_into_the_folder_is_refused(cli, results_copy):
    before = snapshot(results_copy)
    outcome = cli("run", "--input", "random", "--tasks", TASK, "--out", results_copy, "--name", "lab/other")
    fails(outcome, "run", "holds the results of another run")
    assert snapshot(results_copy) == before


def test_report_names_the_tasks_it_leaves_out(cli, results_copy, tmp_path):
    first = paper_result_files(results_copy)[0]
    document = json.loads(first.read_text())
    document.update(scores={}, skipped="too few covered genes", lift=None)  # a skipped task has no lift
    first.write_text(json.dumps(document))
    outcome = cli("report", results_copy, "--out", tmp_path / "report")
    assert outcome.code == 0, outcome.err[-1000:]
    assert "1 task has no score and is left out of the tables" in outcome.out
    assert f"'{document['task']['name']}' (paper folds): too few covered genes" in outcome.out


def test_a_truncated_result_is_named(cli, results_copy, tmp_path):
    first = result_files(results_copy)[0]
    first.write_bytes(first.read_bytes()[:100])
    fails(cli("report", results_copy, "--out", tmp_path / "report"), "report", f"result file '{first}'",
          "expected a genebench TaskResult JSON")


def test_a_run_with_another_probe_scale_is_refused_then_recomputed(cli, tmp_path):
    out = tmp_path / "results"
    assert cli("run", "--input", "random", "--tasks", TASK, "--out", out).code == 0
    assert [json.loads(p.read_text())["probe"]["scale"] for p in paper_result_files(out)] == ["none"]  # the paper's
    before = snapshot(out)
    fails(cli("run", "--input", "random", "--tasks", TASK, "--out", out, "--scale", "standard"), "run",
          "probe scale standard vs none", "--overwrite always")
    assert snapshot(out) == before
    replaced = cli("run", "--input", "random", "--tasks", TASK, "--out", out, "--scale", "standard", "--overwrite",
                   "always", "--scheme", "paper")
    assert replaced.code == 0
    assert [json.loads(p.read_text())["probe"]["scale"] for p in paper_result_files(out)] == ["standard"]
    no_partial_files(out)
