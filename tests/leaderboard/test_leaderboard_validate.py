"""Submission validation on real result files: what passes, and each way a submission is rejected."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from leaderboard_helpers import PROVENANCE, TASKS, task_file_name, write_model

from genebench.errors import SubmissionError
from genebench.leaderboard import check_runs, merge_runs, validate_results
from genebench.leaderboard.validate import MAX_FILE_BYTES, check_no_markup, check_safe_name

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
TASK_NAMES = [task[0] for task in TASKS]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_model(tmp_path / "results", MODEL)


def edit(path: Path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def first_result(run_dir: Path) -> Path:
    return run_dir / task_file_name(TASKS[0][0])


def test_valid_results_load_as_runs(make_results) -> None:
    root = make_results()
    runs = validate_results(root, expected_tasks=TASK_NAMES, expected_data_hash=PROVENANCE["data_hash"])
    assert [run.key for run in runs] == [
        "ctheodoris__Geneformer/main",
        "facebook__esm2_t33_650M_UR50D/main",
        "sentence-transformers__all-MiniLM-L6-v2/main",
    ]
    minilm = runs[2]
    assert minilm.model.id == MODEL and minilm.model.input == "description"
    assert [r.task.name for r in minilm.results] == sorted(TASK_NAMES)
    assert minilm.meta["description"] == f"{MODEL} gene embeddings"
    assert len(minilm.files) == len(TASKS) + 1 and minilm.files[-1].endswith("main/model_meta.json")
    tf = next(r for r in minilm.results if r.task.name == "TF vs non-TF")
    assert tf.scores["roc_auc"].mean == pytest.approx(np.mean(tf.scores["roc_auc"].folds), abs=1e-12)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [("mean", 0.99, "mean 0.99 does not match the mean of its folds"), ("std", 0.0, "std 0.0 does not match")],
)
def test_tampered_scores_are_rejected(run_dir: Path, field: str, value: float, match: str) -> None:
    edit(first_result(run_dir), lambda d: d["scores"]["roc_auc"].__setitem__(field, value))
    with pytest.raises(SubmissionError, match=match):
        validate_results(run_dir.parents[1])


def test_tiny_float_noise_within_tolerance_passes(run_dir: Path) -> None:
    edit(
        first_result(run_dir),
        lambda d: d["scores"]["roc_auc"].__setitem__("mean", d["scores"]["roc_auc"]["mean"] + 1e-12),
    )
    assert len(validate_results(run_dir.parents[1])) == 1


def test_non_finite_folds_are_rejected(run_dir: Path) -> None:
    edit(first_result(run_dir), lambda d: d["scores"]["roc_auc"]["folds"].__setitem__(0, float("nan")))
    with pytest.raises(SubmissionError, match="roc_auc fold 0 is nan, not a finite number"):
        validate_results(run_dir.parents[1])


def test_schema_errors_name_the_field(run_dir: Path) -> None:
    edit(first_result(run_dir), lambda d: d.pop("coverage"))
    with pytest.raises(SubmissionError, match=r"TF_vs_non-TF.json: expected a genebench TaskResult.*'coverage'"):
        validate_results(run_dir.parents[1])


def test_invalid_json_is_rejected(run_dir: Path) -> None:
    first_result(run_dir).write_text('{"genebench_version": ')
    with pytest.raises(SubmissionError, match="expected valid UTF-8 JSON"):
        validate_results(run_dir.parents[1])


def test_unknown_and_missing_tasks_and_wrong_revision(run_dir: Path) -> None:
    runs = validate_results(run_dir.parents[1])
    with pytest.raises(SubmissionError, match=r"found 1 unknown: \['TF vs non-TF'\]"):
        check_runs(runs, expected_tasks=TASK_NAMES[1:])
    with pytest.raises(SubmissionError, match=r"expected all 10 tasks.*1 missing: \['Lys4-only-methylated"):
        check_runs(runs, expected_tasks=[*TASK_NAMES, "Lys4-only-methylated vs non-methylated"])
    with pytest.raises(SubmissionError, match="expected dataset revision data_hash 'ffff', found '3f1c9a0d2b7e'"):
        check_runs(runs, expected_data_hash="ffff")
    check_runs(runs, expected_tasks=TASK_NAMES, expected_data_hash="3f1c9a0d2b7e")


def test_mixed_data_revisions_within_a_run_are_rejected(run_dir: Path) -> None:
    edit(first_result(run_dir), lambda d: d["provenance"].__setitem__("data_hash", "0000"))
    with pytest.raises(SubmissionError, match="expected the same provenance"):
        validate_results(run_dir.parents[1])


def test_duplicate_task_in_one_run_is_rejected(run_dir: Path) -> None:
    shutil.copy(first_result(run_dir), run_dir / "TF_vs_non-TF_copy.json")
    with pytest.raises(SubmissionError, match="duplicate result for task 'TF vs non-TF'"):
        validate_results(run_dir.parents[1])


def test_a_run_given_twice_is_kept_once_and_two_different_runs_are_rejected(tmp_path: Path, caplog) -> None:
    first = validate_results(write_model(tmp_path / "a", MODEL).parents[1])
    copy = validate_results(write_model(tmp_path / "b", MODEL).parents[1])
    assert merge_runs([first, copy, first]) == first
    assert caplog.text.count("was given twice") == 2
    other = validate_results(write_model(tmp_path / "c", MODEL, level=0.6).parents[1])
    with pytest.raises(SubmissionError, match=r"all-MiniLM-L6-v2/main \(paper folds\): two different runs"):
        merge_runs([first, other])


@pytest.mark.parametrize(
    "description",
    ["<script>alert(1)</script>", "nice <img src=x onerror=alert(1)>", "click javascript:alert(1)", "&#60;b&#62;"],
)
def test_markup_in_model_description_is_rejected(tmp_path: Path, description: str) -> None:
    write_model(tmp_path / "results", MODEL, meta={"id": MODEL, "description": description})
    with pytest.raises(SubmissionError, match="model_meta.json.*expected plain text, found markup"):
        validate_results(tmp_path / "results")


def test_markup_in_model_name_is_rejected(run_dir: Path) -> None:
    edit(first_result(run_dir), lambda d: d["model"].__setitem__("id", "evil/<b>model</b>"))
    with pytest.raises(SubmissionError, match="model.id: expected plain text, found markup '<b'"):
        validate_results(run_dir.parents[1])


def test_plain_text_with_comparisons_is_fine() -> None:
    check_no_markup({"description": "AUC > 0.8 when n < 100; A&B"}, what="meta")


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("..", "'.'/'..'"),
        ("", "empty"),
        (".hidden", "starting with '.'"),
        ("a/b", "'/'"),
        ("a\\b", "'\\\\\\\\'"),
        ("a\x00b", "'\\\\x00'"),
        ("line\nbreak", "'\\\\n'"),
        ("x" * 201, "201 characters"),
    ],
)
def test_unsafe_names_are_rejected(name: str, found: str) -> None:
    with pytest.raises(SubmissionError, match=f"expected a name safe as one path component.*found .*{found}"):
        check_safe_name(name, what="model folder")


def test_traversal_in_model_revision_is_rejected(run_dir: Path) -> None:
    edit(first_result(run_dir), lambda d: d["model"].__setitem__("revision", "../../etc"))
    with pytest.raises(SubmissionError, match="model.revision '../../etc': expected a name safe"):
        validate_results(run_dir.parents[1])


def test_result_in_another_models_folder_is_rejected(run_dir: Path) -> None:
    edit(first_result(run_dir), lambda d: d["model"].__setitem__("id", "ctheodoris/Geneformer"))
    with pytest.raises(SubmissionError, match="found 'ctheodoris/Geneformer' at 'main'; keep each result in its model"):
        validate_results(run_dir.parents[1])


def test_unknown_adapter_and_bad_size_are_rejected(run_dir: Path) -> None:
    edit(first_result(run_dir), lambda d: d["model"].__setitem__("input", "telepathy"))
    with pytest.raises(SubmissionError, match="at 'model.input'.*expected an input kind .* found 'telepathy'"):
        validate_results(run_dir.parents[1])
    edit(first_result(run_dir), lambda d: d["model"].update(input="description", n_parameters=-1))
    with pytest.raises(SubmissionError, match="at 'model.n_parameters': Input should be greater than or equal"):
        validate_results(run_dir.parents[1])


def test_oversized_file_is_rejected_before_parsing(run_dir: Path) -> None:
    first_result(run_dir).write_bytes(b" " * (MAX_FILE_BYTES + 1))
    with pytest.raises(SubmissionError, match=f"expected at most {MAX_FILE_BYTES} bytes, found {MAX_FILE_BYTES + 1}"):
        validate_results(run_dir.parents[1])


def test_layout_problems_are_rejected(run_dir: Path) -> None:
    root = run_dir.parents[1]
    (run_dir / "model_meta.json").unlink()
    with pytest.raises(SubmissionError, match="expected model_meta.json beside the results, found none"):
        validate_results(root)
    (root / "stray.json").write_text("{}")
    with pytest.raises(SubmissionError, match=r"expected files at <org__model>/<revision>/<task>.json .*\['stray"):
        validate_results(root)
    (root / "stray.json").unlink()
    first_result(run_dir).rename(root / "link-target.json")
    first_result(run_dir).symlink_to(root / "link-target.json")
    with pytest.raises(SubmissionError, match="expected regular files, found links"):
        validate_results(root)
    with pytest.raises(SubmissionError, match="expected a folder, found none"):
        validate_results(root / "missing")


def test_lift_must_match_the_score_and_the_task_controls(run_dir: Path) -> None:
    def with_controls(lift_offset: float):
        def change(document) -> None:
            document["task"]["controls"] = {"name": 0.61, "random": 0.48}
            document["lift"] = document["scores"]["roc_auc"]["mean"] - 0.61 + lift_offset
        return change

    edit(first_result(run_dir), with_controls(0.0))
    [run] = validate_results(run_dir.parents[1])
    result = next(r for r in run.results if r.task.name == TASKS[0][0])
    assert result.lift == pytest.approx(result.scores["roc_auc"].mean - 0.61)
    assert result.task.best_control == ("name", 0.61) and not result.task.is_shortcut_solvable
    edit(first_result(run_dir), with_controls(0.2))
    with pytest.raises(SubmissionError, match="lift .* does not match the main score minus the best control"):
        validate_results(run_dir.parents[1])
