"""The results format: one JSON document per (model, task), validated by `TaskResult`, and its I/O.

Files live at ``<out>/<org__model>/<revision>/<task file name>.json`` with ``model_meta.json`` beside
them, and are written atomically (temporary file, then rename), so a killed run never leaves half a file.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import logging
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from genebench.atomic import write_atomic
from genebench.comparability import data_hash_of, data_task_count
from genebench.controls.added import AddedOverNames, mean_with_ci
from genebench.controls.lift import lift
from genebench.errors import ResultsError
from genebench.metrics import score_problem
from genebench.model_info import ModelInfo
from genebench.run_identity import RunIdentity
from genebench.tasks.folds import POOLED_AUC
from genebench.tasks.metadata import TaskMetadata, best_of, format_control
from genebench.wording import counted

if TYPE_CHECKING:
    from genebench.data import BenchmarkData

logger = logging.getLogger(__name__)

META_FILE = "model_meta.json"


class MetricScores(BaseModel):
    """One metric: its value on each fold, and their mean and standard deviation."""

    model_config = ConfigDict(extra="forbid")

    folds: list[float]
    mean: float
    std: float


SCORE_TOLERANCE = 1e-9
"""How far a stored mean or std may be from the one recomputed from its folds."""
LIFT_TOLERANCE = 1e-6
"""How far a stored lift may be from the main score minus the best control (lifts are stored to 6 decimals)."""

ADDED_TOLERANCE = 2e-6
"""How far added over names' value may be from combined minus names (each is stored to 6 decimals)."""
DRAW_TOLERANCE = 1e-4
"""How far added over names' interval may be from its draws' 2.5% and 97.5% quantiles (draws are stored to 4
decimals, the interval to 6)."""

COVERED_CONTROLS = "controls_on_covered_rows"
"""The `diagnostics` key of the controls rescored on a partly covered result's rows (see `TaskResult.controls`)."""


class Coverage(BaseModel):
    """How many of the task's rows the model's embeddings cover."""

    model_config = ConfigDict(extra="forbid")

    n_covered: int
    n_task: int
    fraction: float
    missing_genes: list[str] = Field(default_factory=list)


class TaskResult(BaseModel):
    """The score of one model on one task, with everything needed to reproduce and compare it."""

    model_config = ConfigDict(extra="forbid")

    genebench_version: str
    task: TaskMetadata
    provenance: dict[str, Any] = Field(
        description="Where the data came from (`BenchmarkData.provenance`): its `data_hash`, task count, Hub id and "
        "Hub revision, and source versions."
    )
    model: ModelInfo
    probe: dict[str, Any] = Field(description="Probe settings: C, tol, max_iter, pair mode, ...")
    coverage: Coverage
    scores: dict[str, MetricScores] = Field(default_factory=dict)
    main_score: str = "roc_auc"
    skipped: str | None = Field(default=None, description="Why the task was not scored, if it was not.")
    lift: float | None = Field(
        default=None, description="Main score minus the best control's on this task (`controls`); None when the "
        "task was skipped or has no controls."
    )
    added_over_names: AddedOverNames | None = Field(
        default=None, description="Family folds: what the model adds to the name control's held-out predictions "
        "(`genebench.controls.added`); None under paper folds, or when the task was skipped."
    )
    timing: dict[str, float] = Field(default_factory=dict)
    date: str
    config: dict[str, Any] = Field(default_factory=dict, description="The run configuration it ran with.")
    diagnostics: dict[str, Any] = Field(
        default_factory=dict, description="How the solve went (iterations, convergence, device) and input checks."
    )
    converged: bool | None = Field(
        default=None, strict=True, description="Whether every fold probe met the probe's tol: "
        "`diagnostics.n_not_converged == 0` (a derived task's is its parent's fit's). Filled from the diagnostics "
        "when absent; a score that did not converge is shown marked, left out of summaries and refused by submit and "
        "the leaderboard."
    )

    @model_validator(mode="before")
    @classmethod
    def _upgraded(cls, document: Any) -> Any:
        """Older files under today's names (`upgraded`)."""
        return upgraded(document) if isinstance(document, dict) else document

    @model_validator(mode="after")
    def _checked(self) -> TaskResult:
        """The one set of result checks every reader applies: see `result_problem`."""
        if self.converged is None:
            self.converged = recorded_convergence(self.diagnostics)
        if problem := result_problem(self):
            raise ValueError(f"task '{self.task.name}': {problem}")
        return self

    @property
    def is_lift_pending(self) -> bool:
        """Whether its lift waits for the controls rescored on the rows it covers (a task covered in part)."""
        return bool(self.task.controls) and bool(self.scores) and \
            0 < self.coverage.n_covered < self.coverage.n_task and COVERED_CONTROLS not in self.diagnostics

    @property
    def controls(self) -> dict[str, float]:
        """The control scores its lift is over: rescored on the covered rows when the model covers the task in part
        (`diagnostics["controls_on_covered_rows"]`), else the task's stored ones."""
        return self.diagnostics.get(COVERED_CONTROLS, self.task.controls)

    @property
    def best_control(self) -> tuple[str, float] | None:
        """The best of `controls` and its score: what the lift is over."""
        return best_of(self.controls)

    @property
    def scheme(self) -> str:
        """The fold scheme it was scored under ("paper" or "family", `ProbeSettings.scheme`)."""
        return str(self.probe.get("scheme", "paper"))

    @property
    def data_hash(self) -> str:
        """The id of the data it was scored on (`provenance["data_hash"]`, "unknown" when not recorded)."""
        return data_hash_of(self.provenance)

    @property
    def identity(self) -> RunIdentity:
        """The identity of the run it came from. Results of two identities are never summarised together."""
        return RunIdentity(model=self.model.id, model_revision=self.model.revision, vectors=self.model.cache_key,
                           probe=dict(self.probe), data_hash=self.data_hash)

    @property
    def run_identity(self) -> dict[str, Any]:
        """`identity` as a dict."""
        return self.identity.as_dict()

    @property
    def run_id(self) -> str:
        """A short hash of `identity`."""
        return self.identity.run_id


RENAMED = {"dataset_revision": "provenance"}
"""Result fields renamed since files were first written: old name -> today's."""
RENAMED_PROBE = {"folds": "scheme"}
"""`probe` settings renamed since files were first written: old name -> today's."""


def upgraded(document: dict[str, Any]) -> dict[str, Any]:
    """A result document under today's names (`RENAMED`, `RENAMED_PROBE`), so older files read as new ones do: the
    one place old names are known. An old name beside its new one is kept as it is (and a result refuses it).

    Examples:
        >>> upgraded({"dataset_revision": {"data_hash": "ab"}, "probe": {"C": 1.0, "folds": "family"}})
        {'provenance': {'data_hash': 'ab'}, 'probe': {'C': 1.0, 'scheme': 'family'}}
    """
    out = {RENAMED.get(key, key) if RENAMED.get(key) not in document else key: value
           for key, value in document.items()}
    if isinstance(probe := out.get("probe"), dict):
        out["probe"] = {RENAMED_PROBE.get(key, key) if RENAMED_PROBE.get(key) not in probe else key: value
                        for key, value in probe.items()}
    return out


def recorded_convergence(diagnostics: dict[str, Any]) -> bool:
    """Whether the diagnostics record every fold probe as converged (`n_not_converged == 0`; a closed-form or reused
    fit records none and counts as converged)."""
    count = diagnostics.get("n_not_converged", 0)
    return isinstance(count, int) and not isinstance(count, bool) and count == 0


def result_problem(result: TaskResult) -> str | None:
    """Why a result's numbers disagree with each other, or None: the one set of checks behind `TaskResult`, so
    `report`, `compare`, `submit` and the leaderboard all apply it.

    Checked: every score finite and in its metric's range, with its mean and std those of its folds (np.std,
    ddof=0, within `SCORE_TOLERANCE`); the main score present on a scored task; the coverage counts consistent and
    its fraction in [0, 1] (NaN refused); `converged` as the diagnostics record it; the lift equal to the main score
    minus the best of `controls` (None only without either, or while the controls of a task covered in part wait to
    be rescored); added over names as `added_problem` checks it.
    """
    for metric, score in result.scores.items():
        if problem := score_problem(metric, score.folds, score.mean, score.std):
            return problem
        folds = np.asarray(score.folds, dtype=np.float64)
        for stat, stored, recomputed in (("mean", score.mean, folds.mean()), ("std", score.std, folds.std())):
            if abs(stored - recomputed) > SCORE_TOLERANCE:
                return (f"{metric} {stat} {stored!r} does not match the {stat} of its folds {float(recomputed)!r}; "
                        "results must not be edited by hand, rerun `genebench run`")
    if result.skipped is None and result.main_score not in result.scores:
        return f"expected its main score {result.main_score!r} in scores, found {sorted(result.scores)}"
    cov = result.coverage
    expected = cov.n_covered / cov.n_task if cov.n_task > 0 else 0.0
    if not (0 <= cov.n_covered <= cov.n_task) or not np.isfinite(cov.fraction) or abs(cov.fraction - expected) > 1e-9:
        return (f"coverage {cov.n_covered}/{cov.n_task} rows with fraction {cov.fraction!r}: expected 0 <= n_covered "
                f"<= n_task and fraction n_covered / n_task ({expected:.6g}, within [0, 1]); rerun `genebench run`")
    if result.converged != recorded_convergence(result.diagnostics):
        return (f"converged {result.converged} disagrees with diagnostics.n_not_converged "
                f"{result.diagnostics.get('n_not_converged', 0)!r}; results must not be edited by hand, rerun "
                "`genebench run`")
    if result.added_over_names is not None and (problem := added_problem(result.added_over_names)):
        return f"added_over_names: {problem}; results must not be edited by hand, rerun `genebench run`"
    expected = None if result.skipped is not None else lift(result.scores[result.main_score].mean, result.controls)
    if result.lift is None and (expected is None or result.is_lift_pending):
        return None
    if expected is None or result.lift is None or not abs(result.lift - expected) <= LIFT_TOLERANCE:
        return (f"lift {result.lift!r} does not match the main score minus the best control in task.controls "
                f"(diagnostics.controls_on_covered_rows on a partly covered task) ({expected!r}); results must not be "
                "edited by hand, rerun `genebench run`")
    return None


def added_problem(added: AddedOverNames) -> str | None:
    """Why an added-over-names record's numbers disagree with each other, or None.

    A record without a value says why (`skipped`) and holds no numbers. One with a value holds finite numbers: the
    value inside its interval, both in [-1, 1]; `names` and `combined` AUCs in [0, 1] with `combined - names` the
    value (within `ADDED_TOLERANCE`); `n_boot` draws in [-1, 1] whose 2.5% and 97.5% quantiles are the interval
    (within `DRAW_TOLERANCE`).

    Examples:
        >>> added_problem(AddedOverNames(value=0.5, low=-0.001, high=0.001, names=0.5, combined=1.0, draws=[0.0]))
        'value 0.5 lies outside its interval [-0.001, 0.001]'
    """
    numbers = {"value": added.value, "low": added.low, "high": added.high, "names": added.names,
               "combined": added.combined}
    if added.value is None:
        if not added.skipped:
            return "value is null with no reason; expected `skipped` to say why"
        if held := sorted(name for name, number in numbers.items() if number is not None) + \
                (["draws"] if added.draws else []):
            return f"value is null (skipped) but {held} are set; expected none"
        return None
    if added.skipped is not None:
        return f"value {added.value!r} is set but the record is marked skipped ({added.skipped!r})"
    if missing := [name for name, number in numbers.items() if number is None or not np.isfinite(number)]:
        return f"value {added.value!r} is set, expected finite {missing} beside it"
    if not -1 <= added.low <= added.high <= 1:
        return f"interval [{added.low!r}, {added.high!r}]: expected -1 <= low <= high <= 1"
    if not added.low <= added.value <= added.high:
        return f"value {added.value!r} lies outside its interval [{added.low!r}, {added.high!r}]"
    if not (0 <= added.names <= 1 and 0 <= added.combined <= 1) or \
            abs(added.combined - added.names - added.value) > ADDED_TOLERANCE:
        return (f"names {added.names!r} and combined {added.combined!r}: expected two AUCs in [0, 1] with combined "
                f"minus names the value {added.value!r}")
    draws = np.asarray(added.draws, dtype=np.float64)
    if len(draws) != added.n_boot or added.n_boot < 1 or not np.isfinite(draws).all() or np.abs(draws).max() > 1:
        return f"expected n_boot ({added.n_boot}) finite draws in [-1, 1], found {len(draws)}"
    low, high = np.quantile(draws, [0.025, 0.975])
    if abs(low - added.low) > DRAW_TOLERANCE or abs(high - added.high) > DRAW_TOLERANCE:
        return (f"interval [{added.low!r}, {added.high!r}] is not its draws' 2.5% and 97.5% quantiles "
                f"[{float(low):.6g}, {float(high):.6g}]")
    return None


def identity_difference(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    """How two run identities differ, in words: `probe C 100 vs 0.01; data revision a vs b`."""
    parts = []
    for key, label in (("model", "model"), ("model_revision", "model revision"),
                       ("vectors", "vectors (adapter settings)"), ("data_hash", "data revision")):
        if key in mine and key in theirs and mine[key] != theirs[key]:
            parts.append(f"{label} {mine[key]} vs {theirs[key]}")
    if "probe" in mine and "probe" in theirs:
        for name in sorted(set(mine["probe"]) | set(theirs["probe"])):
            if mine["probe"].get(name) != theirs["probe"].get(name):
                parts.append(f"probe {name} {mine['probe'].get(name)} vs {theirs['probe'].get(name)}")
    return "; ".join(parts) or "nothing"


class OverwriteStrategy(str, enum.Enum):
    """What a rerun does with results already on disk.

    - `always`: recompute every task and overwrite its file.
    - `never`: keep every existing file as it is, even one from other settings or data.
    - `only-missing`: compute tasks without a file, and those whose file is unreadable or was made with
      other probe settings or another dataset revision (the default: a rerun resumes).
    """

    ALWAYS = "always"
    NEVER = "never"
    ONLY_MISSING = "only-missing"

    @classmethod
    def from_str(cls, value: str | OverwriteStrategy) -> OverwriteStrategy:
        """Parse a strategy, naming the valid values when `value` is not one."""
        try:
            return cls(value)
        except ValueError:
            valid = [m.value for m in cls]
            raise ValueError(f"overwrite strategy: expected one of {valid}, found {value!r}.") from None


def path_component(name: str) -> str:
    """`name` as one safe path component: kept when made only of letters, digits, `.`, `_`, `-`, `@`, `+`, `=`
    (and not starting with `.` or `_`), else rewritten and suffixed with a short hash of the true name, so a
    name never escapes its folder and two names never share one.

    Examples:
        >>> path_component("TF_vs_non-TF")
        'TF_vs_non-TF'
        >>> path_component("..")
        '_-5ec1f7e7'
    """
    safe = re.sub(r"[^A-Za-z0-9._@+=-]+", "_", name).strip("._")[:100] or "_"
    return safe if safe == name else f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def model_dir_name(model_id: str) -> str:
    """`org/name` -> `org__name`, the folder of a model's results (see `path_component`)."""
    return path_component(model_id.replace("/", "__"))


def task_file_name(task_name: str) -> str:
    """A file-safe, collision-free file name for a task's result (see `path_component`).

    Examples:
        >>> task_file_name("TF_vs_non-TF")
        'TF_vs_non-TF.json'
        >>> task_file_name("TF vs non-TF")
        'TF_vs_non-TF-349d0f6f.json'
    """
    return f"{path_component(task_name)}.json"


def result_path(out_dir: str | Path, model: ModelInfo, task_name: str) -> Path:
    """Where the result of `model` on `task_name` is written."""
    return Path(out_dir) / model_dir_name(model.id) / path_component(model.revision) / task_file_name(task_name)


def write_result(result: TaskResult, out_dir: str | Path) -> Path:
    """Write one result (and its model's `model_meta.json`) atomically; return the result's path.

    Args:
        result: the result to write.
        out_dir: the results root.

    Returns:
        ``<out_dir>/<org__model>/<revision>/<task file name>.json``.
    """
    path = result_path(out_dir, result.model, result.task.name)
    if result.model.revision == "unknown":
        logger.warning("model '%s' has no revision; its results cannot be told apart from a later one's",
                       result.model.id)
    write_atomic(path.parent / META_FILE, result.model.model_dump_json(indent=2))
    write_atomic(path, result.model_dump_json(indent=2))
    return path


def read_result(path: str | Path) -> TaskResult:
    """Read and validate one result file.

    Raises:
        ResultsError: the file is not valid JSON or not a `TaskResult`.
    """
    try:
        return TaskResult.model_validate_json(Path(path).read_bytes())
    except (OSError, ValidationError) as exc:
        reason = str(exc).splitlines()[0]
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"]))
            reason = f"{exc.error_count()} problem(s), first {where + ': ' if where else ''}{first['msg']}"[:300]
        raise ResultsError(f"result file '{path}': expected a genebench TaskResult JSON, found an unreadable or "
                           f"invalid file ({reason}); if it is a damaged result delete it and rerun to recompute it, "
                           "otherwise move it out of the results folder.") from exc


_COLUMNS = ["model", "model_revision", "input", "scheme", "task", "family", "category", "type", "parent", "metric",
            "is_main", "mean", "std", "n_folds", "n_covered", "n_task", "coverage", "skipped", "lift", "best_control",
            "best_control_score", "is_flagged", "converged", "name_control", "incomplete", "dominant_family", "pooled",
            "added", "added_low", "added_high", "added_draws", "added_method", "added_skipped", "data_hash",
            "data_tasks", "genebench_version", "date", "path"]
_KEY = ["model", "model_revision", "scheme", "task", "metric"]
_DTYPES = {"is_main": bool, "mean": np.float64, "std": np.float64, "n_folds": np.int64, "n_covered": np.int64,
           "n_task": np.int64, "coverage": np.float64, "lift": np.float64, "best_control_score": np.float64,
           "is_flagged": bool, "converged": bool, "name_control": np.float64, "pooled": np.float64, "added": np.float64,
           "added_low": np.float64, "added_high": np.float64, "data_tasks": np.float64}
"""Explicit dtypes of the results table's numeric and boolean columns (pandas 3 infers Arrow strings for columns
that start empty, and arithmetic on those fails)."""


def load_results(results_dir: str | Path | Sequence[str | Path]) -> pd.DataFrame:
    """All results under one or more folders as a tidy table (see `results_frame`), `path` relative to its folder.

    A model run found twice (the same folder given twice, or copies) is kept once, with a logged note.

    Args:
        results_dir: a results root written by `write_result` (any depth below it is searched), or several.

    Raises:
        ResultsError: a folder does not exist, a result file in it is invalid, or two copies of one result
            disagree.
    """
    if not isinstance(results_dir, (str, Path)):
        folders = [str(folder) for folder in results_dir]
        return _merge_copies(folders, [load_results(folder) for folder in folders])
    root = Path(results_dir)
    if not root.is_dir():
        raise ResultsError(f"results folder '{root}': expected a folder of result JSON files, found none; "
                           "pass the --out folder of `genebench run`.")
    paths = result_files(root)
    results = [read_result(path) for path in paths]
    check_one_run_per_model(results, paths, root)
    table = results_frame(results, [path.relative_to(root).as_posix() for path in paths])
    check_marks(table, root)
    return table


@functools.cache
def _default_data() -> BenchmarkData | None:
    from genebench.data import open_data
    from genebench.errors import GenebenchError

    try:
        return open_data()
    except GenebenchError:
        return None


def check_marks(results: pd.DataFrame, root: Path) -> None:
    """Refuse results whose task marks (incomplete, shortcut-solvable) differ from the data's, where the default data
    (`genebench.data.open_data()`, the bundled snapshot unless set) is their revision: the data marks a task, never
    its result file (`submit --data` and the leaderboard check every mark against the data they are given).

    Raises:
        ResultsError: naming the file, the mark and the data's.
    """
    data = _default_data()
    rows = results.drop_duplicates(["model", "model_revision", "scheme", "task"])
    if data is None or rows.empty:
        return
    rows = rows[rows["data_hash"] == data.data_hash]
    for row in rows.itertuples():
        truth = data.metadata(row.task, row.scheme)
        incomplete = None if pd.isna(row.incomplete) else row.incomplete
        for mark, found, expected in (("incomplete", incomplete, truth.incomplete),
                                      ("shortcut-solvable", bool(row.is_flagged), truth.is_shortcut_solvable)):
            if found != expected:
                raise ResultsError(f"result file '{root / row.path}': task '{row.task}' is marked {mark} {found!r}, "
                                   f"the data it names ({data.data_hash}) says {expected!r}; results "
                                   "must not be edited by hand, rerun `genebench run`.")


def result_files(root: Path) -> list[Path]:
    """Every result JSON under `root` (any depth), leaving out hidden files, `model_meta.json` files and
    leaderboard sites (folders holding `index.html` and `assets/leaderboard.js`, noted in the log)."""
    sites = {index.parent for index in root.rglob("index.html")
             if (index.parent / "assets" / "leaderboard.js").is_file()}
    for site in sorted(sites):
        logger.info("results folder '%s': leaving out the leaderboard site in '%s'", root, site)
    return [path for path in sorted(root.rglob("*.json")) if path.name != META_FILE and not path.name.startswith(".")
            and not any(site in path.parents for site in sites)]


SCHEME_DIR = re.compile(r"folds-([a-z]+)")
"""A fold scheme's sub-folder of a run's folder (`genebench.run_folder.FOLDS_DIR`)."""


def placed_scheme(path: Path, root: Path) -> str | None:
    """The fold scheme the folder of a result at `path` under `root` is for: that of the nearest `folds-<scheme>`
    folder above it (`root` itself included), None when there is none (the paper's folder, or a copy)."""
    for part in reversed([root.name, *path.relative_to(root).parts[:-1]]):
        if match := SCHEME_DIR.fullmatch(part):
            return match.group(1)
    return None


def check_one_run_per_model(results: Sequence[TaskResult], paths: Sequence[Path], root: Path) -> None:
    """Refuse results of one model and revision that come from two runs (other probe settings, adapter settings
    or data revision), one task's result found twice, and a result in a `folds-<scheme>` folder that claims another
    scheme: no summary may mix them.

    Raises:
        ResultsError: naming what differs, two files that differ and what to do.
    """
    first: dict[tuple[str, str, str], tuple[TaskResult, Path]] = {}
    seen: dict[tuple[str, str, str, str], Path] = {}
    for result, path in zip(results, paths):
        where = path.relative_to(root).as_posix()
        if (placed := placed_scheme(path, root)) not in (None, result.scheme):
            raise ResultsError(f"result file '{path}': expected {placed} folds in its folder, found probe.scheme "
                               f"{result.scheme!r}; results must not be edited by hand, rerun `genebench run`.")
        key = (result.model.id, result.model.revision, result.scheme)  # the two fold schemes are two runs by design
        if (*key, result.task.name) in seen:
            raise ResultsError(
                f"results folder '{root}': model '{key[0]}' ({key[1]}) has two results for task "
                f"'{result.task.name}' under {key[2]} folds ('{seen[(*key, result.task.name)].as_posix()}' and "
                f"'{where}'); keep one (a copy of a run belongs in its own folder).")
        seen[(*key, result.task.name)] = path.relative_to(root)
        if key not in first:
            first[key] = (result, path)
        elif first[key][0].run_id != result.run_id:
            other, other_path = first[key]
            raise ResultsError(
                f"results folder '{root}': model '{key[0]}' ({key[1]}) has results of two runs "
                f"({identity_difference(result.run_identity, other.run_identity)}), e.g. "
                f"'{where}' and '{other_path.relative_to(root).as_posix()}'; a summary "
                "would mix them. Keep each run in its own folder (move one run's files out), or rerun the whole "
                "selection with --overwrite always."
            )


def _merge_copies(folders: list[str], tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate the tables of `folders`, keeping one row per (model, model_revision, scheme, task, metric) and
    noting each run found twice; a model run on two data revisions is refused, as within one folder."""
    table = pd.concat([t.assign(folder=f) for f, t in zip(folders, tables)], ignore_index=True)
    revisions = table.groupby(["model", "model_revision", "scheme"])["data_hash"].unique()
    if len(two := revisions[revisions.map(len) > 1]):
        (model, revision, scheme), found = two.index[0], sorted(two.iloc[0])
        where = sorted(set(table.loc[(table["model"] == model) & (table["model_revision"] == revision), "folder"]))
        raise ResultsError(f"model '{model}' ({revision}) has {scheme}-fold results of two runs (data revision "
                           f"{found[0]} vs {found[1]}) in {where}; a summary would mix them, pass one run.")
    repeated = table[table.duplicated(_KEY, keep=False)]
    if repeated.empty:
        return table.drop(columns="folder")
    values = repeated.groupby(_KEY, dropna=False)["mean"].nunique(dropna=False)
    if (values > 1).any():
        model, revision, scheme, task, _ = values[values > 1].index[0]
        raise ResultsError(f"model '{model}' ({revision}) has two different results for task '{task}' under {scheme} "
                           f"folds in {sorted(set(repeated['folder']))}; pass each run once.")
    for (model, revision), copies in repeated.groupby(["model", "model_revision"]):
        logger.warning("model '%s' (%s) was given more than once (%s); its results are counted once.", model,
                       revision, ", ".join(sorted(set(copies["folder"]))))
    return table.drop_duplicates(_KEY, keep="first", ignore_index=True).drop(columns="folder")


def results_frame(results: Iterable[TaskResult], paths: Iterable[str] | None = None) -> pd.DataFrame:
    """Results as a tidy table: one row per (model, model_revision, task, metric).

    A skipped task gives one row with metric NaN and its reason in `skipped`.

    Args:
        results: results, e.g. those `genebench.pipeline.run_probes` returns.
        paths: where each was read from (default: its path under a results root, as `write_result` files it).

    Returns:
        Columns: model, model_revision (the result's `model.revision`), input, scheme (the fold scheme), task,
        family, category, type, parent (a derived task's multi-label parent), metric, is_main, mean, std, n_folds,
        n_covered, n_task, coverage, skipped, lift (main score minus the best control's, NaN without controls),
        best_control ("name 1.000") and best_control_score (its score, NaN without controls), is_flagged (a
        control reaches `SHORTCUT_AUC`), converged (every fold probe met tol; a score that did not is marked and
        left out of summaries), name_control (the name control's score under the result's folds),
        incomplete (why the task's labels are known to be incomplete, else None), dominant_family (which family
        holds more than a third of the task, `TaskMetadata.dominant_family`, else None), pooled (the roc_auc row: the
        pooled out-of-fold AUC beside the fold mean, a diagnostic; NaN for other metrics), added, added_low,
        added_high, added_draws and added_method (added over names, its 95% interval, its bootstrap draws and how
        they were made, `AddedOverNames.method`; NaN / None without), added_skipped (why a task has none),
        data_hash (the data's id), data_tasks (how many tasks that data revision holds; NaN if unknown),
        genebench_version, date, path.
    """
    results = list(results)
    if paths is None:
        paths = [result_path(".", r.model, r.task.name).as_posix() for r in results]
    records = []
    for result, path in zip(results, paths):
        added = result.added_over_names
        has_added = added is not None and added.value is not None
        base = {"model": result.model.id, "model_revision": result.model.revision, "input": result.model.input,
                "scheme": result.scheme, "task": result.task.name, "family": result.task.family,
                "category": result.task.category, "type": result.task.type, "parent": result.task.parent,
                "n_covered": result.coverage.n_covered, "n_task": result.coverage.n_task,
                "coverage": result.coverage.fraction, "skipped": result.skipped,
                "lift": np.nan if result.lift is None else result.lift,
                "best_control": format_control(result.best_control),
                "best_control_score": result.best_control[1] if result.best_control else np.nan,
                "is_flagged": result.task.is_shortcut_solvable, "converged": bool(result.converged),
                "name_control": result.task.controls.get("name"),
                "incomplete": getattr(result.task, "incomplete", None), "dominant_family": result.task.dominant_family,
                "added": added.value if has_added else np.nan, "added_low": added.low if has_added else np.nan,
                "added_high": added.high if has_added else np.nan, "added_draws": added.draws if has_added else None,
                "added_method": added.method if has_added else None,
                "added_skipped": added.skipped if added is not None else None,
                "data_hash": result.data_hash,
                "data_tasks": data_task_count(result.provenance),
                "genebench_version": result.genebench_version, "date": result.date, "path": path}
        if not result.scores:
            records.append(base | {"metric": np.nan, "is_main": False, "mean": np.nan, "std": np.nan, "n_folds": 0})
        for metric, score in result.scores.items():
            records.append(base | {"metric": metric, "is_main": metric == result.main_score, "mean": score.mean,
                                   "std": score.std, "n_folds": len(score.folds),
                                   "pooled": result.diagnostics.get(POOLED_AUC) if metric == "roc_auc" else None})
    return pd.DataFrame.from_records(records, columns=_COLUMNS).astype(_DTYPES)


def score_cell(mean: float, std: float, n: int = 2) -> str:
    """ "0.840 ± 0.012" over several values; "0.840 (1 task)" for one, where a std of 0 would mislead.

    Examples:
        >>> score_cell(0.84, 0.0, 1), score_cell(0.8, 0.1, 2)
        ('0.840 (1 task)', '0.800 ± 0.100')
    """
    return f"{mean:.3f} (1 task)" if n == 1 else f"{mean:.3f} ± {std:.3f}"


def drop_flagged(results: pd.DataFrame) -> pd.DataFrame:
    """`results` without the tasks a control solves (`is_flagged`: shortcut-solvable, see `genebench.controls`)
    under either fold scheme: one rule for both schemes, so the paper-fold and family-fold means of a row average
    the same tasks.

    Each data revision's task count (`data_tasks`) drops by its flagged tasks too, so a run that held every task
    still counts as complete.
    """
    flagged = results.loc[results["is_flagged"].astype(bool), ["data_hash", "task"]].drop_duplicates()
    out = pd.MultiIndex.from_frame(results[["data_hash", "task"]]).isin(pd.MultiIndex.from_frame(flagged))
    per_revision = flagged.groupby("data_hash")["task"].nunique().astype(np.float64).rename("n_flagged")
    kept = results[~out]
    dropped = kept.join(per_revision, on="data_hash")["n_flagged"].astype(np.float64).fillna(0.0)
    return kept.assign(data_tasks=kept["data_tasks"].astype(np.float64) - dropped)


def format_lift(lift: float) -> str:
    """A lift as shown next to a score: "+0.123", or "–" without controls."""
    return "\u2013" if lift is None or not np.isfinite(lift) else f"{lift:+.3f}"


def one_scheme(results: pd.DataFrame) -> str:
    """The one fold scheme of `results` ("paper" when the table predates schemes).

    Raises:
        ResultsError: `results` mixes the paper's folds and family folds; a summary must not average them.
    """
    schemes = sorted(set(results["scheme"].dropna())) if "scheme" in results else []
    if len(schemes) > 1:
        raise ResultsError(f"summary: expected results of one fold scheme, found {schemes}; summarise each scheme "
                           "apart (`genebench report --scheme paper|family`).")
    return schemes[0] if schemes else "paper"


def summarised_rows(results: pd.DataFrame, *, metric: str | None = None,
                    include_incomplete: bool = False) -> pd.DataFrame:
    """The per-task rows a summary averages, each with its `vote`: one fold scheme only (`one_scheme`), scored tasks
    only (a task a scheme cannot score is skipped, so it is out), converged only (an unconverged score is shown
    marked, never summarised), and without tasks whose labels are known to be
    incomplete (`incomplete`) unless `include_incomplete`.

    The vote rule: a multi-label parent and the binary tasks derived from its labels share one vote, named after the
    parent; every other task is its own vote. A summary averages the tasks of a vote first, then the votes, so one
    parent with 20 labels weighs as much as one other task.
    """
    one_scheme(results)
    scored = results[results["is_main"].astype(bool)] if metric is None else results[results["metric"] == metric]
    if "converged" in scored:  # a score that is not the probe's optimum is shown marked, never summarised
        scored = scored[scored["converged"].astype(bool)]
    if not include_incomplete and "incomplete" in scored:
        scored = scored[scored["incomplete"].isna()]
    parent = scored["parent"] if "parent" in scored else pd.Series(None, index=scored.index, dtype=object)
    return scored.assign(vote=parent.where(parent.notna(), scored["task"]).astype(str))


def vote_means(rows: pd.DataFrame, keys: list[str], values: tuple[str, ...] = ("mean",)) -> pd.DataFrame:
    """Per group of `keys`: each of `values` averaged within a vote, then over votes (see `summarised_rows`), its std
    over votes (`<value>_std`, ddof=0), and the number of tasks (`n_tasks`) and votes (`n_votes`)."""
    per_vote = rows.groupby([*keys, "vote"], sort=True, dropna=False)[list(values)].mean().reset_index()
    grouped = per_vote.groupby(keys, sort=True, dropna=False)
    table = grouped[list(values)].mean()
    for value in values:
        table[f"{value}_std"] = grouped[value].agg(lambda v: float(np.std(v.dropna())) if v.notna().any() else np.nan)
    table["n_votes"] = grouped.size()
    table["n_tasks"] = rows.groupby(keys, sort=True, dropna=False)["task"].nunique()
    return table.reset_index()


def added_summary(rows: pd.DataFrame, *, names_below: float | None = None) -> tuple[float, float, float]:
    """Mean added over names over `rows` (from `summarised_rows`: one vote per parent) and its 95% bootstrap interval
    (`genebench.controls.added.mean_with_ci`); with `names_below`, only tasks whose name control scores below it (the
    leaderboard's "understanding" takes `SHORTCUT_AUC`). NaNs when no task has the score."""
    rows = rows[rows["added"].notna()]
    if names_below is not None:
        rows = rows[rows["name_control"].astype(float) < names_below]
    if rows.empty:
        return float("nan"), float("nan"), float("nan")
    return mean_with_ci(rows["added"].to_numpy(float), added_draws(rows), rows["vote"])


def added_draws(rows: pd.DataFrame) -> np.ndarray:
    """The added-over-names draws of `rows` (each with a score), shape (n_rows, n_boot), to average or pair: only
    draws of one bootstrap method (`AddedOverNames.method`) are, since another method's draws mean another interval.

    Raises:
        ResultsError: `rows` hold draws of two methods (results of an older genebench beside newer ones).
    """
    methods = rows.get("added_method")
    if methods is not None and methods.nunique() > 1:
        found = "; ".join(f"'{method}' in {counted(len(group), 'result')}, e.g. {group['model'].iloc[0]} "
                          f"'{group['task'].iloc[0]}'" for method, group in rows.groupby(methods, sort=True))
        raise ResultsError(f"added over names: draws of two bootstrap methods cannot be averaged or paired ({found}); "
                           "rerun the older results with `genebench run ... --overwrite always`.")
    return np.stack(rows["added_draws"].to_list())


def format_added(mean: float, low: float, high: float) -> str:
    """ "+0.013 [+0.004, +0.022]", or "–" without a score.

    Examples:
        >>> format_added(0.0134, 0.004, 0.0221)
        '+0.013 [+0.004, +0.022]'
    """
    return "\u2013" if not np.isfinite(mean) else f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


def summary_table(results: pd.DataFrame, *, by: tuple[str, ...] = ("category", "type"),
                  metric: str | None = None, include_incomplete: bool = False) -> pd.DataFrame:
    """The paper's summary: per model, per category and per task type, mean ± std over task scores.

    Tasks are averaged by `summarised_rows`' rule: one fold scheme, scored tasks without known-incomplete labels,
    and a multi-label parent with its derived labels counting as one vote.

    Args:
        results: a table from `load_results`, of one fold scheme.
        by: groupings, each a column of `results` (one block of rows per grouping).
        metric: the per-task score summarised (its task means); None (default) takes each task's main score
            (ROC AUC, or PerturbQA's auc_per_gene, or R2 for regression).
        include_incomplete: keep tasks marked incomplete.

    Returns:
        One row per (model, model_revision, grouping, group): n_tasks, n_votes, mean, std (over votes, ddof=0), the mean
        coverage, `lift`, the mean lift over the tasks that have controls (NaN when none has), `added`, the mean
        added over names (NaN without), and `cell`, the "mean ± std" string the paper prints (see `score_cell`).

    Raises:
        ResultsError: a needed column is missing, or `results` mixes fold schemes.

    Examples:
        >>> df = pd.DataFrame({"model": "m", "model_revision": "1", "task": ["a", "b"], "category": "localization",
        ...                    "type": "binary", "metric": "roc_auc", "is_main": True, "mean": [0.8, 0.6],
        ...                    "coverage": 1.0})
        >>> summary_table(df, by=("category",))["cell"].tolist()
        ['0.700 ± 0.100']
    """
    results = results.assign(**{c: np.nan for c in ("lift", "added") if c not in results})
    needed = ("model", "model_revision", "task", "metric" if metric else "is_main", "mean", "coverage", *by)
    missing = [c for c in needed if c not in results]
    if missing:
        raise ResultsError(f"summary table: expected columns {missing} (a table from load_results), found "
                           f"{list(results.columns)}.")
    scored = summarised_rows(results, metric=metric, include_incomplete=include_incomplete)
    blocks = [vote_means(scored, ["model", "model_revision", column], ("mean", "coverage", "lift", "added"))
              .rename(columns={column: "group", "mean_std": "std"}).assign(by=column) for column in by]
    columns = ["model", "model_revision", "by", "group", "n_tasks", "n_votes", "mean", "std", "coverage", "lift",
               "added", "cell"]
    table = pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame()
    if table.empty:
        return pd.DataFrame(columns=columns)
    table["cell"] = [score_cell(m, s, n) for m, s, n in zip(table["mean"], table["std"], table["n_votes"])]
    return table[columns]
