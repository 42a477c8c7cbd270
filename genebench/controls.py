"""Control baselines: how well a task can be solved without understanding genes.

A control depends only on the data, so it is computed once per data revision and fold scheme (at build time, or by
`genebench controls --data DIR --folds paper family`) and stored in the data folder: the control table
`controls/scores.parquet` (each control's main score per task and fold scheme) and, for `name` and `identity`, what
the control predicted for every held-out row (`controls/<control>-<folds>.parquet`, float16, and float32 in
`<control>-<folds>-float32.parquet` for the tasks whose score float16 would move; see
`genebench.data.CONTROL_SCORES_SCHEMA`). Both are listed and hash-checked in the manifest and left out of the data
revision. Three controls:

- ``name``: bag-of-words over each gene's HGNC symbol and approved name ("Gene symbol HLA-A full name major
  histocompatibility complex, class I, A"), probed like any model (`model_adapters.baselines.BagOfWordsAdapter`
  with description source "hgnc").
- ``identity`` (pair tasks): one indicator per gene, the pair's row holding 1/2 at each of its two genes (the
  engine's "mean" pair mode; PerturbQA's ordered pairs use one indicator block per side, "concat"), fitted
  with the same L2 logistic objective by scikit-learn on the sparse indicators. It measures what knowing
  which genes are paired predicts: each gene's propensity to be labelled positive, learnt from the training
  pairs it appears in. Single-gene tasks have no identity control: under cross-validation a test gene's
  indicator is never trained.
- ``random``: seeded random vectors of `RANDOM_DIM` dimensions (`model_adapters.baselines.RandomAdapter`), scored
  with each of `RANDOM_SEEDS` and stored as the mean score, its spread and its number of seeds, without predictions.
  Random vectors know nothing of the labels, so its mean differs from chance by seed noise only; on a task with few
  positives one seed's score spreads by up to 0.1. Seeds are therefore added to such a task until the mean is
  precise (`random_seeds_left`): a task scored with n seeds gets seeds n..n+4 next (every task starts with
  `RANDOM_SEEDS`), while the standard error of its mean (sample standard deviation over seeds / sqrt(n)) is above
  `RANDOM_MAX_SE` and n is below `RANDOM_MAX_SEEDS`. A derived task topped up without its parent is fitted alone, as
  a binary task with its parent's folds (the parent's fit gives each label its own probe: the same score up to the
  solver's tolerance).

A task on which a control reaches `SHORTCUT_AUC` is shortcut-solvable (`TaskMetadata.is_shortcut_solvable`).
A model's lift on a task is its main score minus the best control's (`TaskResult.lift`). On the rows a model covers,
`covered_control_scores` scores the stored predictions of those rows with the probe's metric code: the control
trained on all rows, scored on the model's rows (no refit); `random` counts there with its stored mean.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse
from tqdm.auto import tqdm

from genebench.data import BenchmarkData
from genebench.errors import GenebenchError
from genebench.genes import task_genes
from genebench.metrics import classification_scores
from genebench.partners import partner_embeddings
from genebench.probe.engine import TaskScores, is_ordered_pair, iter_task_scores, main_score_for, summarise_folds
from genebench.probe.settings import ProbeSettings
from genebench.probe.validation import check_labels
from genebench.results import Coverage
from genebench.tasks.metadata import SHORTCUT_AUC, Folds, TaskMetadata
from genebench.tasks.task import Task
from genebench.tasks.types import task_type

logger = logging.getLogger(__name__)

CONTROLS_DIR = "controls"
"""The data folder's sub-folder that holds the control table and predictions."""
RANDOM_DIM = 384
"""Width of the random control: the median width of the models the README evaluates (Gene2vec 200, Geneformer
256, ESM-2 8M 320, MiniLM 384, BGE-small 384, Nucleotide Transformer 512, ESM-2 650M 1280)."""
RANDOM_SEEDS = (0, 1, 2, 3, 4)
"""The random control's first round of seeds, on every task; each further round is the next as many seeds."""
RANDOM_MAX_SE = 0.01
"""Seeds are added to a task's random control while the standard error of its mean is above this."""
RANDOM_MAX_SEEDS = 100
"""The most seeds the random control is scored with on one task."""
CONTROLS: dict[str, str] = {
    "name": "bag-of-words over the HGNC symbol and approved name",
    "identity": "one indicator per gene of a pair (pair tasks)",
    "random": f"seeded random vectors of {RANDOM_DIM} dimensions (mean over {len(RANDOM_SEEDS)} seeds, more until "
              f"its standard error is at most {RANDOM_MAX_SE})",
}
"""Control name -> what its features are."""
STORED_PREDICTIONS = ("name", "identity")
"""Controls whose per-row held-out predictions are stored (`BenchmarkData.control_predictions`)."""

__all__ = ["CONTROLS", "CONTROLS_DIR", "RANDOM_DIM", "RANDOM_MAX_SE", "RANDOM_MAX_SEEDS", "RANDOM_SEEDS",
           "SHORTCUT_AUC", "control_scores", "control_table", "covered_control_scores", "fit_controls",
           "held_out_values", "random_seeds_left", "score_values", "SeedScores"]


@dataclass(frozen=True)
class SeedScores:
    """A control's main scores over seeds on one task: how many, their mean and their spread (std, ddof=0)."""

    n: int = 0
    mean: float = 0.0
    spread: float = 0.0

    def add(self, score: float) -> SeedScores:
        """These scores and one more (Welford's update).

        Examples:
            >>> SeedScores().add(0.4).add(0.6)
            SeedScores(n=2, mean=0.5, spread=0.09999999999999998)
        """
        n = self.n + 1
        mean = self.mean + (score - self.mean) / n
        squares = self.spread ** 2 * self.n + (score - self.mean) * (score - mean)
        return SeedScores(n, mean, float(np.sqrt(squares / n)))

    @property
    def standard_error(self) -> float:
        """The standard error of the mean: sample standard deviation / sqrt(n); infinite below 2 seeds."""
        return self.spread / (self.n - 1) ** 0.5 if self.n > 1 else float("inf")


def fit_controls(data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings, *,
                 names: Sequence[str] = tuple(CONTROLS), scored: Mapping[str, SeedScores] | None = None,
                 progress: bool = True) -> Iterator[tuple[str, int, TaskScores]]:
    """Fit controls on `tasks`, yielding (control name, seed, task scores with held-out predictions) per task.

    Args:
        data: the data the tasks come from (its HGNC table and partner recipes).
        tasks: the tasks, with the folds of one scheme.
        settings: the probe settings every control is fitted with.
        names: which controls (default all of `CONTROLS`).
        scored: task name -> the random control's seeds scored already (stored); a task gets only the seeds
            `random_seeds_left` asks for after them (default none: every task starts at seed 0). The other controls
            are deterministic: seed 0.
        progress: show a progress bar per control.

    Raises:
        GenebenchError: an unknown control name.
    """
    from genebench.inputs import get_adapter

    unknown = sorted(set(names) - set(CONTROLS))
    if unknown:
        raise GenebenchError(f"controls {unknown}: expected names among {list(CONTROLS)}.")
    hgnc = data.hgnc()
    if not tasks:
        return

    def run(name: str, seed: int, adapter: Any, fitted: Sequence[Task]) -> Iterator[tuple[str, int, TaskScores]]:
        embeddings = adapter.encode(task_genes(fitted))
        partners = partner_embeddings(fitted, embeddings, data, adapter)
        scored = iter_task_scores(fitted, embeddings, settings, partner_embeddings=partners)
        yield from ((name, seed, scores) for scores in tqdm(scored, total=len(fitted), desc=f"control {name} {seed}",
                                                             unit="task", disable=not progress))

    if "name" in names:
        yield from run("name", 0, get_adapter("bag-of-words", "control/name", hgnc=hgnc, source="hgnc"), tasks)
    state = {task.name: (scored or {}).get(task.name, SeedScores()) for task in tasks}
    unscorable: set[str] = set()
    while pending := [task for task in tasks if "random" in names and task.name not in unscorable
                      and random_seeds_left(state[task.name])]:
        first = min(state[task.name].n for task in pending)  # a round: the tasks at n seeds get seeds n..n+4
        group = [task for task in pending if state[task.name].n == first]
        for seed in range(first, first + len(RANDOM_SEEDS)):
            adapter = get_adapter("random", "control/random", hgnc=hgnc, dim=RANDOM_DIM, seed=seed)
            for _, _, result in run("random", seed, adapter, group):
                if result.scores:
                    state[result.task.name] = state[result.task.name].add(result.scores[result.main_score].mean)
                else:
                    unscorable.add(result.task.name)
                yield "random", seed, result
    pairs = [task for task in tasks if "identity" in names and len(task.metadata.entity_types) == 2
             and task_type(task.metadata.type).target == "binary"]
    for task in tqdm(pairs, desc="control identity", unit="task", disable=not progress):
        yield "identity", 0, identity_scores(task, settings)


def random_seeds_left(scores: SeedScores) -> bool:
    """Whether a task's random control, scored so far `scores`, gets more seeds: while the standard error of their
    mean is above `RANDOM_MAX_SE` and fewer than `RANDOM_MAX_SEEDS` were scored.

    Examples:
        >>> random_seeds_left(SeedScores(5, 0.5, 0.01)), random_seeds_left(SeedScores(5, 0.5, 0.05))
        (False, True)
    """
    return scores.n < RANDOM_MAX_SEEDS and scores.standard_error > RANDOM_MAX_SE


def control_scores(data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings) -> dict[str, dict[str, float]]:
    """Each control refitted on `tasks` as given (e.g. restricted to the rows a model covers): task name -> control
    name -> main score (random: the mean over its seeds). Tasks a control cannot score are left out of its entries.
    `covered_control_scores` gives the same lift from stored predictions without refitting."""
    per_seed: dict[tuple[str, str], list[float]] = {}
    for name, _, result in fit_controls(data, tasks, settings, progress=False):
        if result.scores:
            per_seed.setdefault((result.task.name, name), []).append(result.scores[result.main_score].mean)
    scores: dict[str, dict[str, float]] = {}
    for (task, name), values in per_seed.items():
        scores.setdefault(task, {})[name] = float(np.mean(values))
    return scores


def held_out_values(task: Task, scores: TaskScores) -> np.ndarray:
    """A fit's held-out probabilities as stored predictions: shape (n_rows, n_columns) float32 over every row of the
    task (NaN where it has none), logits for binary and multi-label columns, log-probabilities for categorical
    classes (a softmax's per-class ranking is that of its log-probabilities, not of its logits).

    Examples:
        >>> task = Task(TaskMetadata(name="t", category="localization", type="binary", family="f", source_url="",
        ...             source_version="", license="", citation=""), np.array(["A", "B"]), np.array([0, 1]),
        ...             np.array([0, 1]))
        >>> held_out_values(task, TaskScores(task, "roc_auc", Coverage(n_covered=1, n_task=2, fraction=.5),
        ...                 held_out=np.array([0.5]), rows=np.array([1]))).ravel().tolist()
        [nan, 0.0]
    """
    proba = np.asarray(scores.held_out, dtype=np.float64)
    proba = proba.reshape(len(proba), -1)
    with np.errstate(divide="ignore"):
        values = np.log(proba) if task_type(task.metadata.type).target == "multiclass" else \
            np.log(proba) - np.log1p(-proba)
    out = np.full((len(task.folds), proba.shape[1]), np.nan, dtype=np.float32)
    out[scores.rows] = values
    return out


def score_values(task: Task, values: np.ndarray, rows: np.ndarray | None = None) -> float:
    """The task's main score from stored predictions (`held_out_values`) on `rows` (default all), with the probe's
    metric code (per-fold `classification_scores`, `summarise_folds`): of those rows, the held-out ones the control
    scored, as the probe scores the rows it covers. NaN when they cannot be scored (a fold without rows, or the
    metric undefined: a held-out fold with one class).

    Args:
        task: the task, with the folds of the scheme the predictions were made under.
        values: shape (n_rows,) or (n_rows, n_columns), the stored predictions of every row.
        rows: indices of the rows to score.
    """
    values = np.asarray(values, dtype=np.float64).reshape(len(task.folds), -1)
    rows = np.arange(len(task.folds)) if rows is None else np.asarray(rows)
    folds = np.asarray(task.folds)
    rows = rows[(folds[rows] >= 0) & ~np.isnan(values[rows]).any(axis=1)]
    values, labels, folds = values[rows], task.labels[rows], folds[rows]
    if not len(rows) or len(np.unique(folds)) <= int(folds.max()):
        return float("nan")
    target = task_type(task.metadata.type).target
    with np.errstate(over="ignore"):
        proba = np.exp(values) if target == "multiclass" else 1 / (1 + np.exp(-values))
    if target == "binary":
        proba = proba[:, 0]
    readout = np.asarray(task.entities[rows, 1]) if is_ordered_pair(task) else None
    per_fold = [classification_scores(labels[folds == k], proba[folds == k], task_type=task.metadata.type,
                                      groups=None if readout is None else readout[folds == k], thresholded=False)
                for k in range(int(folds.max()) + 1)]
    return summarise_folds(per_fold)[main_score_for(task)].mean


def covered_control_scores(data: BenchmarkData, task: Task, rows: np.ndarray, folds: Folds) -> dict[str, float]:
    """Each control's main score on the given rows of `task` (the rows a model covers), from the stored predictions.

    The controls were trained on all rows; only their held-out predictions of `rows` are scored, with the probe's
    metric code (`score_values`), so no control is refitted. On all rows this is the stored score. `random` has
    no stored predictions and counts with its stored mean over seeds. A control that cannot score the rows is left
    out.

    Args:
        data: the data folder holding the controls.
        task: the task as loaded with `folds`.
        rows: shape (n_covered,), indices of the covered rows.
        folds: the fold scheme ("paper" or "family").
    """
    scores = {name: score_values(task, values, rows) for name, values in
              data.control_predictions(task.name, folds).items()}
    stored = data.metadata(task.name, folds).controls
    scores |= {name: score for name, score in stored.items() if name not in STORED_PREDICTIONS}
    return {name: float(score) for name, score in scores.items() if np.isfinite(score)}


def identity_scores(task: Task, settings: ProbeSettings) -> TaskScores:
    """Score a binary pair task from gene indicators alone (the ``identity`` control).

    Args:
        task: a binary task over (gene, partner) pairs.
        settings: its C, tol and max_iter are the probe's.

    Returns:
        The task's scores and held-out probabilities, every row covered.
    """
    from sklearn.linear_model import LogisticRegression

    start = time.perf_counter()
    X = _indicators(task.entities, ordered=is_ordered_pair(task))
    labels, folds = np.asarray(task.labels), np.asarray(task.folds)
    n = len(labels)
    result = TaskScores(task=task, main_score=main_score_for(task), coverage=Coverage(n_covered=n, n_task=n,
                                                                                       fraction=1.0))
    result.skipped = check_labels(task.metadata.type, labels, folds, min_covered=settings.min_covered)
    if result.skipped is None:
        readout = np.asarray(task.entities[:, 1], dtype=str) if is_ordered_pair(task) else None
        per_fold, n_iter = [], []
        held_out = np.full(n, np.nan)
        for fold in range(int(folds.max()) + 1):
            train, test = folds != fold, folds == fold
            probe = LogisticRegression(C=settings.C, tol=settings.tol, max_iter=settings.max_iter)
            probe.fit(X[train], labels[train])
            n_iter.append(int(probe.n_iter_[0]))
            held_out[test] = probe.predict_proba(X[test])[:, 1]
            per_fold.append(classification_scores(labels[test], held_out[test], task_type=task.metadata.type,
                                                  groups=None if readout is None else readout[test]))
        scores = summarise_folds(per_fold)
        if np.isfinite(scores[result.main_score].mean):
            result.scores = scores
            result.held_out, result.rows = held_out, np.arange(n)
            result.diagnostics = {"solver": "scikit-learn lbfgs on sparse gene indicators",
                                  "n_features": X.shape[1], "n_iter_max": max(n_iter)}
        else:
            result.skipped = f"{result.main_score} is undefined: no held-out group has both classes"
    result.seconds = time.perf_counter() - start
    return result


def _indicators(entities: np.ndarray, *, ordered: bool) -> scipy.sparse.csr_matrix:
    """Sparse pair rows, shape (n_pairs, n_entities): 1/2 at each gene ("mean"), or one block per side."""
    entities = np.asarray(entities, dtype=str)
    n = len(entities)
    if ordered:
        _, first = np.unique(entities[:, 0], return_inverse=True)
        _, second = np.unique(entities[:, 1], return_inverse=True)
        columns, value, width = np.stack([first, second + first.max() + 1], axis=1), 1.0, first.max() + second.max() + 2
    else:
        names, codes = np.unique(entities, return_inverse=True)
        columns, value, width = codes.reshape(n, 2), 0.5, len(names)
    matrix = scipy.sparse.csr_matrix((np.full(2 * n, value), (np.repeat(np.arange(n), 2), columns.ravel())),
                                     shape=(n, int(width)))
    matrix.sum_duplicates()  # a gene paired with itself: one indicator of 1
    return matrix


def control_table(tasks: Sequence[TaskMetadata]) -> pd.DataFrame:
    """One row per task: each control's main score, the best control and whether it is shortcut-solvable."""
    rows = []
    for meta in tasks:
        best = meta.best_control
        scores = {name: meta.controls.get(name, np.nan) for name in CONTROLS}
        rows.append({"task": meta.name, "type": meta.type, **scores, "best": best[0] if best else None,
                     "shortcut": meta.is_shortcut_solvable})
    return pd.DataFrame(rows, columns=["task", "type", *CONTROLS, "best", "shortcut"])
