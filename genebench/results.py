"""The results format: one JSON document per (model, task), validated by `TaskResult`, and its I/O.

Files live at ``<out>/<org__model>/<revision>/<task file name>.json`` with ``model_meta.json`` beside
them, and are written atomically (temporary file, then rename), so a killed run never leaves half a file.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from genebench.atomic import write_atomic
from genebench.comparability import revision_id, revision_task_count
from genebench.errors import ResultsError
from genebench.metrics import score_problem
from genebench.model_info import ModelInfo
from genebench.tasks.metadata import TaskMetadata, best_of, format_control

logger = logging.getLogger(__name__)

META_FILE = "model_meta.json"


class MetricScores(BaseModel):
    """One metric: its value on each fold, and their mean and standard deviation."""

    model_config = ConfigDict(extra="forbid")

    folds: list[float]
    mean: float
    std: float


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
    dataset_revision: dict[str, Any] = Field(description="Source versions and a hash of the built data.")
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
    timing: dict[str, float] = Field(default_factory=dict)
    date: str
    config: dict[str, Any] = Field(default_factory=dict, description="The run configuration it ran with.")
    diagnostics: dict[str, Any] = Field(
        default_factory=dict, description="How the solve went (iterations, convergence, device) and input checks."
    )

    @model_validator(mode="after")
    def _scores_in_range(self) -> TaskResult:
        """Every score finite and within its metric's range; a scored task has its main score."""
        for metric, score in self.scores.items():
            if problem := score_problem(metric, score.folds, score.mean, score.std):
                raise ValueError(f"task '{self.task.name}': {problem}")
        if self.skipped is None and self.main_score not in self.scores:
            raise ValueError(f"task '{self.task.name}': expected its main score {self.main_score!r} in scores, "
                             f"found {sorted(self.scores)}")
        return self

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
    def run_identity(self) -> dict[str, Any]:
        """What makes results one run: model, revision, vectors (the cache key of the adapter settings), probe
        settings and data revision. Results of two identities are never summarised together."""
        return {"model": self.model.id, "revision": self.model.revision, "vectors": self.model.cache_key,
                "probe": self.probe, "data": revision_id(self.dataset_revision)}

    @property
    def run_id(self) -> str:
        """A short hash of `run_identity`."""
        text = json.dumps(self.run_identity, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def identity_difference(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    """How two run identities differ, in words: `probe C 100 vs 0.01; data revision a vs b`."""
    parts = []
    for key, label in (("model", "model"), ("revision", "revision"), ("vectors", "vectors (adapter settings)"),
                       ("data", "data revision")):
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


_COLUMNS = ["model", "revision", "input", "task", "family", "category", "type", "metric", "is_main", "mean", "std",
            "n_folds", "n_covered", "n_task", "coverage", "skipped", "lift", "best_control", "is_flagged",
            "data_revision", "data_tasks", "genebench_version", "date", "path"]
_KEY = ["model", "revision", "task", "metric"]


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
    return results_frame(results, [path.relative_to(root).as_posix() for path in paths])


def result_files(root: Path) -> list[Path]:
    """Every result JSON under `root` (any depth), leaving out hidden files, `model_meta.json` files and
    leaderboard sites (folders holding `index.html` and `assets/leaderboard.js`, noted in the log)."""
    sites = {index.parent for index in root.rglob("index.html")
             if (index.parent / "assets" / "leaderboard.js").is_file()}
    for site in sorted(sites):
        logger.info("results folder '%s': leaving out the leaderboard site in '%s'", root, site)
    return [path for path in sorted(root.rglob("*.json")) if path.name != META_FILE and not path.name.startswith(".")
            and not any(site in path.parents for site in sites)]


def check_one_run_per_model(results: Sequence[TaskResult], paths: Sequence[Path], root: Path) -> None:
    """Refuse results of one model and revision that come from two runs (other probe settings, adapter settings
    or data revision): no summary may mix them.

    Raises:
        ResultsError: naming what differs, two files that differ and what to do.
    """
    first: dict[tuple[str, str], tuple[TaskResult, Path]] = {}
    for result, path in zip(results, paths):
        key = (result.model.id, result.model.revision)
        if key not in first:
            first[key] = (result, path)
        elif first[key][0].run_id != result.run_id:
            other, other_path = first[key]
            raise ResultsError(
                f"results folder '{root}': model '{key[0]}' ({key[1]}) has results of two runs "
                f"({identity_difference(result.run_identity, other.run_identity)}), e.g. "
                f"'{path.relative_to(root).as_posix()}' and '{other_path.relative_to(root).as_posix()}'; a summary "
                "would mix them. Keep each run in its own folder (move one run's files out), or rerun the whole "
                "selection with --overwrite always."
            )


def _merge_copies(folders: list[str], tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate the tables of `folders`, keeping one row per (model, revision, task, metric) and noting each run
    found twice."""
    table = pd.concat([t.assign(folder=f) for f, t in zip(folders, tables)], ignore_index=True)
    repeated = table[table.duplicated(_KEY, keep=False)]
    if repeated.empty:
        return table.drop(columns="folder")
    values = repeated.groupby(_KEY, dropna=False)["mean"].nunique(dropna=False)
    if (values > 1).any():
        model, revision, task, _ = values[values > 1].index[0]
        raise ResultsError(f"model '{model}' ({revision}) has two different results for task '{task}' in "
                           f"{sorted(set(repeated['folder']))}; pass each run once.")
    for (model, revision), copies in repeated.groupby(["model", "revision"]):
        logger.warning("model '%s' (%s) was given more than once (%s); its results are counted once.", model,
                       revision, ", ".join(sorted(set(copies["folder"]))))
    return table.drop_duplicates(_KEY, keep="first", ignore_index=True).drop(columns="folder")


def results_frame(results: Iterable[TaskResult], paths: Iterable[str] | None = None) -> pd.DataFrame:
    """Results as a tidy table: one row per (model, revision, task, metric).

    A skipped task gives one row with metric NaN and its reason in `skipped`.

    Args:
        results: results, e.g. those `genebench.pipeline.run_probes` returns.
        paths: where each was read from (default: its path under a results root, as `write_result` files it).

    Returns:
        Columns: model, revision, input, task, family, category, type, metric, is_main, mean, std,
        n_folds, n_covered, n_task, coverage, skipped, lift (main score minus the best control's, NaN without
        controls), best_control ("name 1.000"), is_flagged (a control reaches `SHORTCUT_AUC`), data_revision (the
        data's id), data_tasks (how many tasks that data revision holds; NaN if unknown), genebench_version, date,
        path.
    """
    results = list(results)
    if paths is None:
        paths = [result_path(".", r.model, r.task.name).as_posix() for r in results]
    records = []
    for result, path in zip(results, paths):
        base = {"model": result.model.id, "revision": result.model.revision, "input": result.model.input,
                "task": result.task.name, "family": result.task.family, "category": result.task.category,
                "type": result.task.type, "n_covered": result.coverage.n_covered, "n_task": result.coverage.n_task,
                "coverage": result.coverage.fraction, "skipped": result.skipped,
                "lift": np.nan if result.lift is None else result.lift,
                "best_control": format_control(result.best_control),
                "is_flagged": result.task.is_shortcut_solvable,
                "data_revision": revision_id(result.dataset_revision),
                "data_tasks": revision_task_count(result.dataset_revision),
                "genebench_version": result.genebench_version, "date": result.date, "path": path}
        if not result.scores:
            records.append(base | {"metric": np.nan, "is_main": False, "mean": np.nan, "std": np.nan, "n_folds": 0})
        for metric, score in result.scores.items():
            records.append(base | {"metric": metric, "is_main": metric == result.main_score, "mean": score.mean,
                                   "std": score.std, "n_folds": len(score.folds)})
    return pd.DataFrame.from_records(records, columns=_COLUMNS).astype({"data_tasks": float})


def score_cell(mean: float, std: float, n: int = 2) -> str:
    """ "0.840 ± 0.012" over several values; "0.840 (1 task)" for one, where a std of 0 would mislead.

    Examples:
        >>> score_cell(0.84, 0.0, 1), score_cell(0.8, 0.1, 2)
        ('0.840 (1 task)', '0.800 ± 0.100')
    """
    return f"{mean:.3f} (1 task)" if n == 1 else f"{mean:.3f} ± {std:.3f}"


def drop_flagged(results: pd.DataFrame) -> pd.DataFrame:
    """`results` without the tasks a control solves (`is_flagged`: shortcut-solvable, see `genebench.controls`).

    Each data revision's task count (`data_tasks`) drops by its flagged tasks too, so a run that held every task
    still counts as complete.
    """
    flagged = results["is_flagged"].astype(bool)
    per_revision = results[flagged].groupby("data_revision")["task"].nunique()
    kept = results[~flagged]
    return kept.assign(data_tasks=kept["data_tasks"] - kept["data_revision"].map(per_revision).fillna(0))


def format_lift(lift: float) -> str:
    """A lift as shown next to a score: "+0.123", or "–" without controls."""
    return "\u2013" if lift is None or not np.isfinite(lift) else f"{lift:+.3f}"


def summary_table(results: pd.DataFrame, *, by: tuple[str, ...] = ("category", "type"),
                  metric: str | None = None) -> pd.DataFrame:
    """The paper's summary: per model, per category and per task type, mean ± std over task scores.

    Args:
        results: a table from `load_results`.
        by: groupings, each a column of `results` (one block of rows per grouping).
        metric: the per-task score summarised (its task means); None (default) takes each task's main score
            (ROC AUC, or PerturbQA's auc_per_gene, or R2 for regression).

    Returns:
        One row per (model, revision, grouping, group): n_tasks, mean, std (over tasks, ddof=0), the mean
        coverage of those tasks, `lift`, the mean lift over the tasks that have controls (NaN when none has),
        and `cell`, the "mean ± std" string the paper prints (see `score_cell`).

    Examples:
        >>> df = pd.DataFrame({"model": "m", "revision": "1", "task": ["a", "b"], "category": "localization",
        ...                    "type": "binary", "metric": "roc_auc", "is_main": True, "mean": [0.8, 0.6],
        ...                    "coverage": 1.0})
        >>> summary_table(df, by=("category",))["cell"].tolist()
        ['0.700 ± 0.100']
    """
    if "lift" not in results:
        results = results.assign(lift=np.nan)
    needed = ("model", "revision", "task", "metric" if metric else "is_main", "mean", "coverage", *by)
    missing = [c for c in needed if c not in results]
    if missing:
        raise ResultsError(f"summary table: expected columns {missing} (a table from load_results), found "
                           f"{list(results.columns)}.")
    scored = results[results["is_main"].astype(bool)] if metric is None else results[results["metric"] == metric]
    blocks = []
    for column in by:
        grouped = scored.groupby(["model", "revision", column], sort=True)
        block = grouped.agg(n_tasks=("task", "nunique"), mean=("mean", "mean"),
                            std=("mean", lambda v: float(np.std(v))), coverage=("coverage", "mean"),
                            lift=("lift", "mean")).reset_index()
        blocks.append(block.rename(columns={column: "group"}).assign(by=column))
    table = pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame()
    columns = ["model", "revision", "by", "group", "n_tasks", "mean", "std", "coverage", "lift", "cell"]
    if table.empty:
        return pd.DataFrame(columns=columns)
    table["cell"] = [score_cell(m, s, n) for m, s, n in zip(table["mean"], table["std"], table["n_tasks"])]
    return table[columns]
