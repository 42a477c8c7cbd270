"""The controls a model's score is compared with, on the rows it covers, and its lift over them.

The controls were trained on every row of a task; on the rows a model covers, only their stored held-out predictions
of those rows are scored (`score_values`, the probe's metric code), so no control is refitted. This module is the one
place that decides between the stored scores (the model covers every row) and rescored ones (`controls_on`), and the
one place a lift is computed (`lift`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from genebench.controls.table import STORED_PREDICTIONS
from genebench.metrics import classification_scores
from genebench.probe.engine import is_ordered_pair, main_score_for, summarise_folds
from genebench.tasks.metadata import Scheme
from genebench.tasks.task import Task
from genebench.tasks.types import task_type

if TYPE_CHECKING:
    from genebench.data import BenchmarkData
    from genebench.results import TaskResult

logger = logging.getLogger(__name__)

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
    values = np.asarray(values, dtype=np.float64).reshape(len(task.fold_ids), -1)
    rows = np.arange(len(task.fold_ids)) if rows is None else np.asarray(rows)
    folds = np.asarray(task.fold_ids)
    rows = rows[(folds[rows] >= 0) & ~np.isnan(values[rows]).any(axis=1)]
    values, labels, folds = values[rows], task.labels[rows], folds[rows]
    if not len(rows) or len(np.unique(folds)) <= int(folds.max()):
        return float("nan")
    proba = task_type(task.metadata.type).probabilities(values)
    readout = np.asarray(task.entities[rows, 1]) if is_ordered_pair(task) else None
    per_fold = [classification_scores(labels[folds == k], proba[folds == k], task_type=task.metadata.type,
                                      groups=None if readout is None else readout[folds == k], thresholded=False)
                for k in range(int(folds.max()) + 1)]
    return summarise_folds(per_fold)[main_score_for(task)].mean


SCORE_TOLERANCE = 1e-6
"""How far the score of a task's stored predictions may be from its stored score when read back (the same values
and metric code give the same score; this only absorbs the summation order of another CPU)."""


def stored_predictions(data: BenchmarkData, task: Task, scheme: Scheme) -> dict[str, np.ndarray]:
    """The stored controls' held-out values of `task` (loaded under `scheme`), checked the first time they are read
    in this process: each block must give its stored score on the task's rows, so an edited, swapped, reordered or
    truncated block is refused.

    Raises:
        SourceFormatError: a block is not what the control table records.
    """
    stored = data.stored_controls
    values = data.control_predictions(task.name, scheme)
    if (scheme, task.name) in stored.verified:
        return values
    for record in stored.records(task.metadata.name, scheme):
        found = values[record["control"]]
        if len(found) != len(task.labels):
            raise stored.refused(record, f"has {len(found)} rows where the task has {len(task.labels)}")
        expected = record["score"]
        score = score_values(task, found)
        if expected is not None and np.isfinite(expected) and not abs(score - expected) <= SCORE_TOLERANCE:
            raise stored.refused(record, f"scores {score:.6f} where the control table records {expected:.6f}")
    stored.verified.add((scheme, task.name))
    return values


def covered_control_scores(data: BenchmarkData, task: Task, rows: np.ndarray, scheme: Scheme, *,
                           predictions: Mapping[str, np.ndarray] | None = None) -> dict[str, float]:
    """Each control's main score on the given rows of `task` (the rows a model covers), from the stored predictions.

    The controls were trained on all rows; only their held-out predictions of `rows` are scored, with the probe's
    metric code (`score_values`), so no control is refitted. On all rows this is the stored score. `random` has
    no stored predictions and counts with its stored mean over seeds. A control that cannot score the rows is left
    out.

    Args:
        data: the data folder holding the controls.
        task: the task as loaded with `scheme`.
        rows: shape (n_covered,), indices of the covered rows.
        scheme: the fold scheme ("paper" or "family").
        predictions: the task's `stored_predictions`, when the caller has them (default: read here).
    """
    if predictions is None:
        predictions = stored_predictions(data, task, scheme)
    scores = {name: score_values(task, values, rows) for name, values in predictions.items()}
    stored = data.metadata(task.name, scheme).controls
    scores |= {name: score for name, score in stored.items() if name not in STORED_PREDICTIONS}
    return {name: float(score) for name, score in scores.items() if np.isfinite(score)}




def covered_rows(task: Task, missing: Sequence[str]) -> np.ndarray:
    """The rows of `task` holding none of the `missing` entities (the rows a model covers), shape (n_covered,)."""
    entities = task.entities if task.entities.ndim == 2 else task.entities[:, None]
    return np.flatnonzero(~np.isin(entities.astype(str), list(missing)).any(axis=1))


def controls_on(data: BenchmarkData, task: Task, rows: np.ndarray, scheme: Scheme, *,
                predictions: Mapping[str, np.ndarray] | None = None) -> dict[str, float]:
    """The controls a lift is over: the task's stored scores when `rows` are all its rows, else each control's
    score on `rows` from its stored held-out predictions (`covered_control_scores`). `predictions`: the task's
    `stored_predictions`, when the caller has them (default: read, and so checked, here)."""
    if predictions is None:
        predictions = stored_predictions(data, task, scheme)  # the stored scores, checked against their predictions
    if len(rows) == len(task.labels):
        return dict(data.metadata(task.name, scheme).controls)
    return covered_control_scores(data, task, rows, scheme, predictions=predictions)


def controls_current(result: TaskResult, data: BenchmarkData, task: Task, scheme: Scheme) -> bool:
    """Whether a kept result's lift is over the controls now in the data (a repaired or rebuilt control file
    changes them, and the result is then recomputed)."""
    if not result.scores:
        return True
    rows = covered_rows(task, result.coverage.missing_genes)
    if result.controls == controls_on(data, task, rows, scheme):
        return True
    logger.info("result of '%s' has a lift over other controls than the data's; recomputing it", task.name)
    return False
