"""Submission validation: every result file is checked before it is shown or uploaded.

A results folder holds `<org__model>/<revision>/<task-file>.json` files, one `TaskResult` each, with
`model_meta.json` beside them. `validate_results` reads such a folder and returns one `ModelRun` per
(model, revision), or raises one `SubmissionError` naming the file, what was expected, what was found and
what to do. Nothing read here is ever executed; strings that look like markup are rejected outright.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from genebench.controls.lift import lift as lift_over
from genebench.errors import GenebenchError, SubmissionError
from genebench.model_info import MODEL_ID, ModelInfo
from genebench.results import (
    SCHEME_DIR,
    TaskResult,
    identity_difference,
    model_dir_name,
    path_component,
    result_problem,
    task_file_name,
)
from genebench.tasks.metadata import FOLD_SCHEMES

if TYPE_CHECKING:
    from genebench.data import BenchmarkData

logger = logging.getLogger(__name__)

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Largest result or metadata file accepted (bytes)."""
MAX_SUBMISSION_BYTES = 256 * 1024 * 1024
"""Largest total size of one submission (bytes)."""
MAX_NAME_CHARS = 200
"""Longest path component accepted."""
META_FILE = "model_meta.json"

_MARKUP = re.compile(r"<\s*[A-Za-z!/?]|javascript\s*:|data\s*:\s*text/html|&#", re.IGNORECASE)
_FORBIDDEN_CHARS = set('/\\<>:"|?*')


@dataclass(frozen=True)
class ModelRun:
    """One model at one revision: its validated results and metadata.

    Attributes:
        dir_name: The `<org__model>` folder name.
        model: The model record shared by all its results.
        meta: The parsed `model_meta.json`.
        provenance: Where its data came from (`TaskResult.provenance`), shared by all its results.
        results: One validated result per task, sorted by task name.
        files: Paths of the files read, relative to the results root, in POSIX form.
        root: The results root they were read from.
    """

    dir_name: str
    model: ModelInfo
    meta: dict[str, Any]
    provenance: dict[str, Any]
    results: tuple[TaskResult, ...]
    files: tuple[str, ...]
    root: Path = field(compare=False)

    @property
    def key(self) -> str:
        """`<org__model>/<revision>`: unique per run of one fold scheme, safe as a relative path."""
        return f"{self.dir_name}/{self.model.revision}"

    @property
    def scheme(self) -> str:
        """The fold scheme its results were scored under."""
        return self.results[0].scheme

    @property
    def folder(self) -> str:
        """Its folder under the results root: `<org__model>/<revision>`, in `folds-<scheme>/` for another scheme."""
        return PurePosixPath(self.files[-1]).parent.as_posix()


def check_safe_name(name: str, *, what: str) -> str:
    """Return `name` if it is safe as one path component, else raise `SubmissionError`.

    Rejects empty names, `.` and `..`, leading dots, separators and characters invalid on common file systems,
    control characters, and names over `MAX_NAME_CHARS`.

    >>> check_safe_name("org__model", what="model folder")
    'org__model'
    """
    problem = None
    if not name or name in (".", ".."):
        problem = "an empty name or '.'/'..'"
    elif name.startswith("."):
        problem = "a name starting with '.'"
    elif len(name) > MAX_NAME_CHARS:
        problem = f"{len(name)} characters (at most {MAX_NAME_CHARS})"
    elif bad := sorted({c for c in name if c in _FORBIDDEN_CHARS or unicodedata.category(c).startswith("C")}):
        problem = f"the characters {bad}"
    if problem:
        raise SubmissionError(
            f"{what} {name!r}: expected a name safe as one path component (no separators, traversal or control "
            f"characters), found {problem}; rename it."
        )
    return name


def check_no_markup(value: Any, *, what: str) -> None:
    """Raise `SubmissionError` if any string in `value` (searched recursively) looks like HTML or script.

    >>> check_no_markup({"description": "A protein language model"}, what="model_meta.json")
    """
    if isinstance(value, str):
        if match := _MARKUP.search(value):
            raise SubmissionError(
                f"{what}: expected plain text, found markup {match.group(0)!r} in {value[:80]!r}; "
                "remove HTML, script and character references from model names and descriptions."
            )
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_no_markup(key, what=what)
            check_no_markup(item, what=f"{what}.{key}")
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_no_markup(item, what=what)


def check_scores(result: TaskResult, *, source: str) -> None:
    """Refuse a result that cannot be published: one whose numbers disagree (`result_problem`, the checks every
    reader applies, rerun here since a copy may be edited after it was read), one whose lift still waits for its
    controls, and one whose probe did not converge."""
    problem = result_problem(result)
    if problem is None and result.lift is None and result.is_lift_pending:
        problem = ("its lift waits for the controls rescored on the rows it covers; finish the run "
                   "(rerun the same `genebench run` command, it resumes)")
    if problem is None and not result.converged:
        problem = (f"its probe did not converge on {result.diagnostics.get('n_not_converged', 'some')} fold "
                   "problem(s), so its score is not the probe's optimum; rerun with a larger probe max_iter in a run "
                   "config (or --scale standard)")
    if problem:
        raise SubmissionError(f"{source}: {problem}.")


def _read_json(path: Path, *, source: str) -> Any:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise SubmissionError(
            f"{source}: expected at most {MAX_FILE_BYTES} bytes, found {size}; "
            "result files this large are not produced by `genebench run`, remove or regenerate it."
        )
    try:
        return json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SubmissionError(f"{source}: expected valid UTF-8 JSON, found {exc}; regenerate the file.") from exc


def load_result(path: Path, *, source: str) -> TaskResult:
    """Read and schema-validate one result file, checking its size, scores and model fields."""
    document = _read_json(path, source=source)
    try:
        result = TaskResult.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "value_error" and not first["loc"]:  # the record's own checks say what to do
            raise SubmissionError(f"{source}: {first['ctx']['error']}") from None
        where = ".".join(str(part) for part in first["loc"])
        raise SubmissionError(
            f"{source}: expected a genebench TaskResult, found {exc.error_count()} schema error(s), first"
            f"{f' at {where!r}' if where else ''}: {first['msg']}; regenerate it with `genebench run`."
        ) from None
    check_scores(result, source=source)
    check_model(result.model, source=source)
    return result


def check_model(model: ModelInfo, *, source: str) -> None:
    """Check a result's model record: a Hub-style id, a safe revision and no markup (the input kind and parameter
    count are checked by `ModelInfo` itself)."""
    check_no_markup(model.model_dump(), what=f"{source} model")
    if not MODEL_ID.fullmatch(model.id):
        raise SubmissionError(
            f"{source}: expected model.id like 'org/name' (letters, digits, '.', '_', '-'), found {model.id!r}; "
            "use the model's Hub id, or name the run with `genebench run --name ORG/NAME`."
        )
    check_safe_name(model.revision, what=f"{source} model.revision")


def check_runs(
    runs: Iterable[ModelRun],
    *,
    expected_tasks: Iterable[str] | None = None,
    expected_data_hash: str | None = None,
    allow_partial: bool = False,
) -> None:
    """Check each run names the expected data revision and holds exactly the expected tasks.

    Args:
        runs: Runs from `validate_results`.
        expected_tasks: The task names of the dataset revision. None skips the task-set check.
        expected_data_hash: The `data_hash` of the dataset revision. None skips the revision check.
        allow_partial: accept runs missing some of the expected tasks (the leaderboard shows them unranked).
    """
    expected = None if expected_tasks is None else set(expected_tasks)
    for run in runs:
        found_hash = run.provenance.get("data_hash")
        if expected_data_hash is not None and found_hash != expected_data_hash:
            raise SubmissionError(
                f"results {run.key}: expected dataset revision data_hash {expected_data_hash!r}, found "
                f"{found_hash!r}; rerun `genebench run` against the current benchmark data."
            )
        if expected is None:
            continue
        found = {result.task.name for result in run.results}
        if unknown := sorted(found - expected):
            raise SubmissionError(
                f"results {run.key}: expected only tasks of this dataset revision, found {len(unknown)} unknown: "
                f"{unknown[:5]}; remove them or rerun against the current data."
            )
        if (missing := sorted(expected - found)) and not allow_partial:
            raise SubmissionError(
                f"results {run.key}: expected all {len(expected)} tasks of the dataset revision, found "
                f"{len(missing)} missing: {missing[:5]}; rerun `genebench run` for the whole benchmark (it resumes)."
            )


CONTROL_TOLERANCE = 1e-3
"""How far a recorded control score may be from the one the data's stored control predictions give (they are
mostly stored as float16, so a score recomputed from them may differ in its fourth decimal)."""


def expected_controls(data: BenchmarkData, result: TaskResult) -> dict[str, float]:
    """The control scores `result`'s lift must be over, from `data` alone: the stored ones when the model covers the
    whole task, else each control rescored on the rows it covers from the stored control predictions
    (`genebench.controls.covered_control_scores`), under the result's fold scheme."""
    from genebench.controls.covered import controls_on, covered_rows

    stored = data.metadata(result.task.name, scheme=result.scheme).controls
    if result.skipped is not None or result.coverage.n_covered >= result.coverage.n_task or not stored:
        return dict(stored)
    task = data.load_task(result.task.name, scheme=result.scheme)
    return controls_on(data, task, covered_rows(task, result.coverage.missing_genes), result.scheme)


MARKS = ("incomplete", "incomplete_labels", "family_unscorable")
"""The task marks a result carries that the data decides: each must be the data's."""


def check_controls(runs: Iterable[ModelRun], data: BenchmarkData) -> None:
    """Refuse any result whose controls, lift, shortcut flag or task marks (`MARKS`) differ from what `data` gives:
    a lift is recomputed from the data's stored control predictions, never taken from the file (an edited lift whose
    controls were edited to match is caught here), and a task is marked incomplete, flagged or unscorable by the
    data alone."""
    for run in runs:
        for result in run.results:
            source = f"results {run.key}/{task_file_name(result.task.name)}"
            try:
                expected = expected_controls(data, result)
            except GenebenchError as exc:
                raise SubmissionError(f"{source}: its controls cannot be checked against the data ({exc})") from exc
            recorded = result.controls
            differ = sorted(name for name in set(expected) | set(recorded)
                            if not abs(expected.get(name, np.nan) - recorded.get(name, np.nan)) <= CONTROL_TOLERANCE)
            lift = None if result.skipped is not None else lift_over(result.scores[result.main_score].mean, expected)
            truth = data.metadata(result.task.name, scheme=result.scheme)
            flagged = truth.is_shortcut_solvable
            marks = [mark for mark in MARKS if getattr(result.task, mark) != getattr(truth, mark)]
            problem = None
            if differ:
                name = differ[0]
                problem = (f"control '{name}' is recorded as {recorded.get(name)!r}, the data's stored control "
                           f"predictions give {expected.get(name)!r}")
            elif (lift is None) != (result.lift is None) or (lift is not None and abs(result.lift - lift) > 2e-3):
                problem = f"lift {result.lift!r} does not match the one the data's controls give ({lift!r})"
            elif result.task.is_shortcut_solvable != flagged:
                problem = (f"shortcut flag {result.task.is_shortcut_solvable} does not match the data's "
                           f"({flagged})")
            elif marks:
                problem = (f"task mark {marks[0]} {getattr(result.task, marks[0])!r} does not match the data's "
                           f"({getattr(truth, marks[0])!r})")
            if problem:
                raise SubmissionError(f"{source}: {problem}; results must not be edited by hand, rerun `genebench "
                                      "run` against this data.")


def _load_meta(path: Path, *, source: str, model: ModelInfo) -> dict[str, Any]:
    if not path.is_file():
        raise SubmissionError(f"{source}: expected {META_FILE} beside the results, found none; rerun `genebench run`.")
    meta = _read_json(path, source=source)
    if not isinstance(meta, dict):
        raise SubmissionError(f"{source}: expected a JSON object, found {type(meta).__name__}; rerun `genebench run`.")
    check_no_markup(meta, what=source)
    for key in ("id", "revision"):
        if key in meta and meta[key] != getattr(model, key):
            raise SubmissionError(
                f"{source}: expected {key} {getattr(model, key)!r} as in the results, found {meta[key]!r}; "
                "results and metadata must come from the same run."
            )
    return meta


def folder_scheme(parts: tuple[str, ...]) -> str | None:
    """The fold scheme of a run folder given by its path parts under a results root: `<org__model>/<revision>` is
    the paper's, `folds-<scheme>/<org__model>/<revision>` that scheme's; None for any other place."""
    if len(parts) == 2:
        return "paper"
    match = SCHEME_DIR.fullmatch(parts[0]) if len(parts) == 3 else None
    return match.group(1) if match and match.group(1) in FOLD_SCHEMES and match.group(1) != "paper" else None


def _load_run(root: Path, run_dir: Path) -> ModelRun:
    dir_name, revision = run_dir.parent.name, run_dir.name
    where = f"{dir_name}/{revision}"
    check_safe_name(dir_name, what="model folder")
    check_safe_name(revision, what="revision folder")
    paths = sorted(p for p in run_dir.iterdir() if p.suffix == ".json" and p.name != META_FILE)
    if not paths:
        raise SubmissionError(f"results {where}: expected result JSON files, found none; rerun `genebench run`.")
    results: dict[str, tuple[TaskResult, str]] = {}
    for path in paths:
        source = f"{where}/{path.name}"
        check_safe_name(path.name, what="result file")
        result = load_result(path, source=source)
        if (model_dir_name(result.model.id), path_component(result.model.revision)) != (dir_name, revision):
            raise SubmissionError(
                f"{source}: expected model {dir_name.replace('__', '/')!r} at revision {revision!r} (its folder), "
                f"found {result.model.id!r} at {result.model.revision!r}; keep each result in its model's folder."
            )
        if result.task.name in results:
            raise SubmissionError(
                f"{source}: duplicate result for task {result.task.name!r}, already in {results[result.task.name][1]}; "
                "keep one file per task."
            )
        results[result.task.name] = (result, source)
    first = results[min(results)][0]
    scheme = folder_scheme(run_dir.relative_to(root).parts)
    for result, source in results.values():
        if result.scheme != scheme:
            raise SubmissionError(
                f"{source}: expected results scored under {scheme} folds in this folder, found {result.scheme} folds; "
                "keep each fold scheme's results where `genebench run` wrote them."
            )
        for name, value, reference in (
            ("model", result.model, first.model),
            ("provenance", result.provenance, first.provenance),
        ):
            if value != reference:
                raise SubmissionError(
                    f"{source}: expected the same {name} as the other results of {where}, found {value!r} vs "
                    f"{reference!r}; results of one run must come from one model and one data revision."
                )
        if result.run_id != first.run_id:
            raise SubmissionError(
                f"{source}: expected one run per model folder, found results of two runs "
                f"({identity_difference(result.run_identity, first.run_identity)}); keep each run in its own folder "
                "or rerun the whole selection with --overwrite always."
            )
    meta = _load_meta(run_dir / META_FILE, source=f"{where}/{META_FILE}", model=first.model)
    return ModelRun(
        dir_name=dir_name,
        model=first.model,
        meta=meta,
        provenance=first.provenance,
        results=tuple(results[name][0] for name in sorted(results)),
        files=tuple(p.relative_to(root).as_posix() for p in [*paths, run_dir / META_FILE]),
        root=root,
    )


def validate_results(
    results_dir: str | Path,
    *,
    expected_tasks: Iterable[str] | None = None,
    expected_data_hash: str | None = None,
) -> list[ModelRun]:
    """Validate a results folder and return its runs.

    Args:
        results_dir: Root holding `<org__model>/<revision>/*.json`.
        expected_tasks: The task names of the dataset revision; each run must have exactly these.
            None skips the task-set check.
        expected_data_hash: The `data_hash` of the dataset revision every result must name. None skips the check.

    Returns:
        One `ModelRun` per (model, revision), sorted by key.

    Raises:
        SubmissionError: On the first problem found.
    """
    root = Path(results_dir)
    if not root.is_dir():
        raise SubmissionError(
            f"results folder {str(root)!r}: expected a folder, found none; pass the --out of `genebench run`."
        )
    json_files = [p for p in root.rglob("*.json") if p.is_file() or p.is_symlink()]
    if links := sorted(p.relative_to(root).as_posix() for p in json_files if p.is_symlink()):
        raise SubmissionError(
            f"results folder {str(root)!r}: expected regular files, found links {links[:3]}; copy the files instead."
        )
    total = sum(p.lstat().st_size for p in json_files)
    if total > MAX_SUBMISSION_BYTES:
        raise SubmissionError(
            f"results folder {str(root)!r}: expected at most {MAX_SUBMISSION_BYTES} bytes of JSON, found {total}; "
            "submit one model at a time."
        )
    placed = {p: folder_scheme(p.parent.relative_to(root).parts) for p in json_files}
    if misplaced := sorted(p.relative_to(root).as_posix() for p, scheme in placed.items() if scheme is None):
        raise SubmissionError(
            f"results folder {str(root)!r}: expected files at <org__model>/<revision>/<task>.json (family folds: "
            f"folds-family/<org__model>/<revision>/<task>.json), found {misplaced[:3]}; pass the --out folder of "
            "`genebench run`."
        )
    run_dirs = sorted({p.parent for p in json_files})
    if not run_dirs:
        raise SubmissionError(
            f"results folder {str(root)!r}: expected result JSON files, found none; run `genebench run`."
        )
    runs = [_load_run(root, run_dir) for run_dir in run_dirs]
    check_runs(runs, expected_tasks=expected_tasks, expected_data_hash=expected_data_hash)
    return runs


def merge_runs(groups: Iterable[list[ModelRun]]) -> list[ModelRun]:
    """Concatenate runs from several folders; a (model, revision) given twice with the same results is kept once,
    with a logged note, and one given twice with different results is rejected."""
    merged: dict[tuple[str, str], ModelRun] = {}
    for runs in groups:
        for run in runs:
            key = (run.key, run.scheme)
            if key in merged and merged[key].results == run.results:
                logger.warning("Model %s (%s folds) was given twice (%s and %s); it is shown once.", run.key,
                               run.scheme, merged[key].root, run.root)
                continue
            if key in merged:
                raise SubmissionError(
                    f"results {run.key} ({run.scheme} folds): two different runs, in {str(merged[key].root)!r} and "
                    f"{str(run.root)!r}; pass each model's results once."
                )
            merged[key] = run
    return [merged[key] for key in sorted(merged)]
