"""One set of result checks, inside the result record: every reader (report, compare, submit, the leaderboard)
refuses the same edited or impossible result in one line, and leaves the folder as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reliability_helpers import fails, paper_result_files, snapshot

from genebench.constants import SNAPSHOT_DIR

READERS = {
    "report": (("report", "{results}", "--out", "{tmp}/report"), "report"),
    "compare": (("compare", "{results}", "--a", "genebench/random-256", "--b", "other/model"), "compare"),
    "submit": (("submit", "{results}", "--repo", "org/results", "--dry-run", "--allow-unverified-task-set"),
               "submit"),
    "leaderboard": (("leaderboard", "build", "{results}", "--out", "{tmp}/site"), "leaderboard"),
}


def _edit(path: Path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def _refused_everywhere(cli, results: Path, tmp_path: Path, reader: str, *fragments: str) -> None:
    before = snapshot(results)
    args, name = READERS[reader]
    fails(cli(*[a.format(results=results, tmp=tmp_path) for a in args]), name, *fragments)
    assert snapshot(results) == before
    assert not (tmp_path / "site" / "index.html").exists() and not (tmp_path / "report" / "report.html").exists()


def _mean_off_its_folds(document: dict) -> None:
    document["scores"]["roc_auc"]["mean"] = 0.99  # the folds average about 0.5


@pytest.mark.parametrize("reader", READERS)
def test_a_mean_that_is_not_its_folds_is_refused_by_every_reader(reader, cli, results_copy, tmp_path):
    _edit(paper_result_files(results_copy)[0], _mean_off_its_folds)
    _refused_everywhere(cli, results_copy, tmp_path, reader, "roc_auc mean 0.99 does not match the mean of its folds")


def _coverage_three(document: dict) -> None:
    document["coverage"]["fraction"] = 3.0


def _coverage_nan(document: dict) -> None:
    document["coverage"]["fraction"] = float("nan")


def _more_covered_than_rows(document: dict) -> None:
    document["coverage"]["n_covered"] = document["coverage"]["n_task"] + 5
    document["coverage"]["fraction"] = 1.0


COVERAGES = {"fraction 3.0": _coverage_three, "fraction NaN": _coverage_nan,
             "n_covered over n_task": _more_covered_than_rows}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("coverage", COVERAGES)
def test_impossible_coverage_is_refused_by_every_reader(coverage, reader, cli, results_copy, tmp_path):
    _edit(paper_result_files(results_copy)[0], COVERAGES[coverage])
    _refused_everywhere(cli, results_copy, tmp_path, reader, "expected 0 <= n_covered <= n_task and fraction")


def _other_C(document: dict) -> None:
    document["probe"]["C"] = 0.5


def test_submit_refuses_a_folder_mixing_two_probe_settings_as_report_does(cli, results_copy, tmp_path):
    _edit(paper_result_files(results_copy)[0], _other_C)
    _refused_everywhere(cli, results_copy, tmp_path, "submit", "results of two runs", "probe C")
    _refused_everywhere(cli, results_copy, tmp_path, "report", "results of two runs", "probe C")


def test_leaderboard_refuses_a_folder_mixing_two_probe_settings(cli, results_copy, tmp_path):
    _edit(paper_result_files(results_copy)[0], _other_C)
    _refused_everywhere(cli, results_copy, tmp_path, "leaderboard", "results of two runs", "probe C 1.0 vs 0.5")


def _edited_lift(document: dict) -> None:
    document["lift"] = 0.385


@pytest.mark.parametrize("reader", READERS)
def test_an_edited_lift_is_refused_by_every_reader(reader, cli, results_copy, tmp_path):
    _edit(paper_result_files(results_copy)[0], _edited_lift)
    _refused_everywhere(cli, results_copy, tmp_path, reader, "lift 0.385 does not match the main score minus")


def test_the_record_itself_refuses_an_edit_made_after_reading(results_copy):
    from genebench.errors import SubmissionError
    from genebench.leaderboard.validate import check_scores
    from genebench.results import read_result

    result = read_result(paper_result_files(results_copy)[0])
    assert result.converged is True
    edited = result.model_copy(update={"lift": (result.lift or 0) + 0.2})  # copies skip validation
    with pytest.raises(SubmissionError, match="does not match the main score minus the best control"):
        check_scores(edited, source="edited.json")


def test_a_run_folder_with_both_fold_schemes_is_submitted_whole(cli, results_copy):
    assert any(p.is_dir() for p in results_copy.glob("folds-*"))  # `run` writes family folds beside the paper's
    before = snapshot(results_copy)
    outcome = cli("submit", results_copy, "--repo", "org/results", "--dry-run", "--allow-unverified-task-set")
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err[-2000:]
    assert snapshot(results_copy) == before


def test_a_paper_folder_result_claiming_family_folds_is_refused(cli, results_copy, tmp_path):
    _edit(paper_result_files(results_copy)[0], lambda d: d["probe"].update(scheme="family"))
    _refused_everywhere(cli, results_copy, tmp_path, "submit", "expected results scored under paper folds in this "
                        "folder, found family folds")


@pytest.mark.parametrize("reader", ["report", "compare"])
def test_folds_family_over_only_skipped_family_tasks_names_the_reason(reader, cli, tmp_path):
    """HLA alone: `run` scores it under paper folds and records it skipped under family folds (two HGNC groups)."""
    out = tmp_path / "hla"
    assert cli("run", "--input", "random", "--tasks", "HLA class I vs class II", "--out", out).code == 0
    args = ("--out", tmp_path / "report") if reader == "report" else ("--a", "genebench/random-256", "--b", "x")
    fails(cli(reader, out, *args, "--scheme", "family"), reader, "found only skipped tasks (1; 'HLA class I vs class "
          "II': labels cannot be split by gene family", "leave out --scheme")
    assert not (tmp_path / "report").exists()
    paper_only = tmp_path / "paper"
    assert cli("run", "--input", "random", "--tasks", "HLA class I vs class II", "--scheme", "paper", "--out",
               paper_only).code == 0
    fails(cli(reader, paper_only, *args, "--scheme", "family"), reader, "found only ['paper']; run the model with "
          "--scheme family first")


def _family_file(results: Path) -> Path:
    """The family-fold result of "TF vs non-TF" (added over names computed) in a run's folder."""
    return next(p for p in (results / "folds-family").rglob("TF_vs_non-TF*.json"))


def _outside(document: dict) -> None:
    document["added_over_names"].update(value=0.5, low=-0.001, high=0.001)


def _seven(document: dict) -> None:
    document["added_over_names"]["value"] = 7.0


def _shifted(document: dict) -> None:  # value, interval and draws moved together, off combined - names
    added = document["added_over_names"]
    added.update(value=added["value"] + 0.3, low=added["low"] + 0.3, high=added["high"] + 0.3,
                 draws=[round(d + 0.3, 4) for d in added["draws"]])


def _no_draws(document: dict) -> None:
    document["added_over_names"]["draws"] = []


def _nan_draw(document: dict) -> None:
    document["added_over_names"]["draws"][3] = float("nan")


def _draws_elsewhere(document: dict) -> None:  # draws that disagree with the interval
    document["added_over_names"]["draws"] = [d + 0.01 for d in document["added_over_names"]["draws"]]


def _null_no_reason(document: dict) -> None:
    document["added_over_names"].update(value=None, low=None, high=None, names=None, combined=None, draws=[])


def _combined_off(document: dict) -> None:
    document["added_over_names"]["combined"] = document["added_over_names"]["names"] - 0.2


def _interval_out_of_range(document: dict) -> None:
    document["added_over_names"].update(value=1.5, low=1.2, high=1.8, combined=2.4,
                                        draws=[1.5] * len(document["added_over_names"]["draws"]))


ADDED = {"value outside its interval": (_outside, "value 0.5 lies outside its interval [-0.001, 0.001]"),
         "value 7.0": (_seven, "value 7.0 lies outside its interval"),
         "value, interval and draws shifted by 0.3": (_shifted, "expected two AUCs in [0, 1] with combined minus "
                                                                "names the value"),
         "empty draws": (_no_draws, "expected n_boot (200) finite draws in [-1, 1], found 0"),
         "a NaN draw": (_nan_draw, "expected n_boot (200) finite draws in [-1, 1], found 200"),
         "draws off the interval": (_draws_elsewhere, "is not its draws' 2.5% and 97.5% quantiles"),
         "null value without a reason": (_null_no_reason, "value is null with no reason"),
         "combined minus names not the value": (_combined_off, "with combined minus names the value"),
         "interval outside [-1, 1]": (_interval_out_of_range, "expected -1 <= low <= high <= 1")}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("damage", ADDED)
def test_damaged_added_over_names_is_refused_by_every_reader(damage, reader, cli, results_copy, tmp_path):
    change, fragment = ADDED[damage]
    _edit(_family_file(results_copy), change)
    _refused_everywhere(cli, results_copy, tmp_path, reader, "added_over_names: ", fragment)


@pytest.mark.parametrize("reader", ["report", "compare"])
def test_a_family_result_edited_to_claim_paper_folds_is_refused(reader, cli, results_copy, tmp_path):
    """Was `ValueError: too many values to unpack` in `_merge_copies`."""
    _edit(_family_file(results_copy), lambda d: d["probe"].update(scheme="paper"))
    _refused_everywhere(cli, results_copy, tmp_path, reader, "expected family folds in its folder, found "
                        "probe.scheme 'paper'")


@pytest.mark.parametrize("reader", ["report", "compare"])
def test_one_model_run_on_two_data_revisions_given_as_two_folders_is_refused(reader, cli, results_copy, tmp_path):
    """Was `ValueError: too many values to unpack` in `_merge_copies`."""
    import shutil

    other = tmp_path / "other"
    shutil.copytree(results_copy, other)
    for path in paper_result_files(other):
        _edit(path, lambda d: d["provenance"].update(data_hash="0" * 16))
    before = snapshot(results_copy), snapshot(other)
    args = ("--out", tmp_path / "report") if reader == "report" else ("--a", "genebench/random-256", "--b", "x/y")
    fails(cli(reader, results_copy, other, *args), reader, "has paper-fold results of two runs (data revision",
          "pass one run")
    assert (snapshot(results_copy), snapshot(other)) == before
    assert not (tmp_path / "report").exists()


def test_a_result_copied_twice_into_one_folder_is_refused(cli, results_copy, tmp_path):
    import shutil

    copy = results_copy / "backup" / "genebench__random-256" / "seed=0"
    shutil.copytree(paper_result_files(results_copy)[0].parent, copy)
    _refused_everywhere(cli, results_copy, tmp_path, "report", "has two results for task", "keep one")


MARK_READERS = {  # `submit --data` runs the leaderboard's data checks, once the run holds every task of the data
    "report": READERS["report"][0],
    "compare": READERS["compare"][0],
    "leaderboard": ("leaderboard", "build", "{results}", "--out", "{tmp}/site", "--data", str(SNAPSHOT_DIR)),
}


def _marked_incomplete(document: dict) -> None:
    document["task"]["incomplete"] = "hand-added"


def _flag_raised(document: dict) -> None:  # a control raised past the shortcut line, the lift kept consistent
    document["task"]["controls"]["random"] = 0.95
    best = max(document["task"]["controls"].values())
    document["lift"] = round(document["scores"]["roc_auc"]["mean"] - best, 6)


@pytest.mark.parametrize("reader", MARK_READERS)
@pytest.mark.parametrize("mark", ["incomplete", "flagged"])
def test_a_task_mark_is_the_data_s_never_the_file_s(mark, reader, cli, results_copy, tmp_path):
    path = next(p for p in paper_result_files(results_copy) if "N1_targets" in p.name)  # not flagged, complete
    _edit(path, _marked_incomplete if mark == "incomplete" else _flag_raised)
    before = snapshot(results_copy)
    outcome = cli(*[a.format(results=results_copy, tmp=tmp_path) for a in MARK_READERS[reader]])
    name = "leaderboard" if reader == "leaderboard" else reader
    fragment = {"incomplete": "'hand-added'", "flagged": "random"}[mark]
    line = fails(outcome, name, "N1", "rerun `genebench run`")
    assert fragment in line or "shortcut" in line, line
    assert snapshot(results_copy) == before
    assert not (tmp_path / "site" / "index.html").exists() and not (tmp_path / "report").exists()


def test_an_unscorable_mark_added_to_a_family_result_is_refused_against_the_data(cli, results_copy, tmp_path):
    _edit(_family_file(results_copy), lambda d: d["task"].update(family_unscorable="hand-added"))
    before = snapshot(results_copy)
    fails(cli(*[a.format(results=results_copy, tmp=tmp_path) for a in MARK_READERS["leaderboard"]]), "leaderboard",
          "task mark family_unscorable 'hand-added' does not match the data's (None)")
    assert snapshot(results_copy) == before
