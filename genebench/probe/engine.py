"""The probe engine: from a task and a gene-embedding table to per-fold scores.

Each task type's probe, metrics and main score come from its row of `genebench.tasks.types.TASK_TYPE_TABLE`
(its target: binary and multi-label -> logistic per column, multiclass -> multinomial logistic or one-vs-rest,
continuous -> ridge); a derived binary task reuses its parent's multi-label fit.

Pair vectors are the mean of the two genes' vectors (`pair_mode`, the reference's default) or their
concatenation. A train-test pair task (PerturbQA: perturbed gene, read-out gene) is an ordered pair:
it uses `ordered_pair_mode`, concatenation by default, since which gene is perturbed matters; it is
also scored with `auc_per_gene` (its main score) over read-out genes.

Genes without a vector are never filled in: each task is scored on the rows whose genes are all
covered, and the coverage is recorded.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse
from threadpoolctl import threadpool_limits

from genebench.embeddings import GeneEmbeddings
from genebench.errors import EmbeddingError
from genebench.metrics import classification_scores, regression_scores
from genebench.parallel import core_threads
from genebench.probe.design import Features, PairDesign
from genebench.probe.settings import ProbeSettings, Scale
from genebench.probe.solvers import Basis, fit_logistic, fit_ridge
from genebench.probe.validation import check_dims, check_embeddings, check_labels
from genebench.results import Coverage, MetricScores
from genebench.tasks.folds import pooled_diagnostic
from genebench.tasks.task import Task
from genebench.tasks.types import task_type

logger = logging.getLogger(__name__)


@dataclass
class TaskScores:
    """One task's scores, coverage and how the solve went: the engine's part of a `TaskResult`.

    `rows` are the task rows the model covers (indices into `task.entities`, shape (n_covered,)) and `held_out`
    the model's held-out scores on them, shape (n_covered,) or (n_covered, n_columns) as the task's type has
    them; both None when the task was skipped. The run scores the controls on the same rows from them.
    """

    task: Task
    main_score: str
    coverage: Coverage
    scores: dict[str, MetricScores] = field(default_factory=dict)
    skipped: str | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    held_out: np.ndarray | None = None
    rows: np.ndarray | None = None


def is_ordered_pair(task: Task) -> bool:
    """Whether rows are (perturbed gene, read-out gene) pairs scored per read-out gene (PerturbQA)."""
    return task.metadata.evaluation == "train-test" and len(task.metadata.entity_types) == 2


def main_score_for(task: Task) -> str:
    """The metric a task is ranked by: its type's (`TASK_TYPE_TABLE`), or `auc_per_gene` for ordered pairs."""
    return "auc_per_gene" if is_ordered_pair(task) else task_type(task.metadata.type).main_score


_SPARSE = 0.05
"""A table with at most this share of non-zero values (word counts, indicators) is probed as a sparse matrix:
the same objective and optimum, with products that cost its non-zeros."""


class _Table:
    """A checked embedding table: symbol lookup, its vectors as probed, and its preconditioning basis."""

    def __init__(self, embeddings: GeneEmbeddings, name: str, scale: Scale) -> None:
        self.embeddings, self.report = check_embeddings(embeddings, name=name)
        self.name, self.scale = name, scale
        self._row_of = {str(symbol): row for row, symbol in enumerate(self.embeddings.symbols)}  # unique (merged)
        vectors = self.embeddings.vectors
        self.vectors: np.ndarray | scipy.sparse.csr_array = vectors
        if np.count_nonzero(vectors) <= _SPARSE * vectors.size:
            self.vectors = scipy.sparse.csr_array(vectors, dtype=np.float32)
        self._basis: Basis | None = None

    @property
    def basis(self) -> Basis:
        """The preconditioning basis of the table's vectors for the probe's `scale`, computed once."""
        if self._basis is None:
            self._basis = Basis.from_features(self.embeddings.vectors, scale=self.scale)
        return self._basis

    def rows(self, symbols: np.ndarray) -> np.ndarray:
        """Row of each symbol in the table, -1 where it has no vector."""
        return np.fromiter((self._row_of.get(symbol, -1) for symbol in symbols), np.int64, len(symbols))


def _nvidia_driver() -> bool:
    """Whether this machine has an NVIDIA driver; without one, CUDA cannot be there and torch need not load."""
    return Path("/proc/driver/nvidia/version").exists() or shutil.which("nvidia-smi") is not None


def _resolve_device(device: str) -> str | None:
    if device == "cpu":
        return None
    if importlib.util.find_spec("torch") is not None and ("torch" in sys.modules or _nvidia_driver()):
        import torch

        if torch.cuda.is_available():
            return "cuda"
    if device == "cuda":
        raise EmbeddingError("ProbeSettings.device: expected a CUDA device, found none visible to torch; "
                             "use device='cpu' or 'auto'.")
    return None


class _Features:
    """The covered rows of a task and their feature matrix."""

    def __init__(self, task: Task, tables: list[_Table | None], settings: ProbeSettings) -> None:
        entities = task.entities if task.entities.ndim == 2 else task.entities[:, None]
        kinds = task.metadata.entity_types
        if entities.shape[1] != len(kinds):
            raise EmbeddingError(f"task '{task.name}': expected {len(kinds)} entity columns {kinds}, found "
                                 f"{entities.shape[1]}; rebuild the task data.")
        used = []
        for kind in kinds:
            table = tables[0] if kind == "gene" else tables[1]
            if table is None:
                raise EmbeddingError(f"task '{task.name}': expected embeddings for its '{kind}' entities, found "
                                     "none; pass partner_embeddings.")
            used.append(table)
        rows = np.stack([t.rows(entities[:, j]) for j, t in enumerate(used)], axis=1)
        covered = (rows >= 0).all(axis=1)
        self.rows = np.flatnonzero(covered)
        self.missing = sorted({str(s) for j in range(len(used)) for s in entities[rows[:, j] < 0, j]})
        self.n_task = len(entities)
        self.mode = (settings.ordered_pair_mode if is_ordered_pair(task) else settings.pair_mode) if len(used) == 2 \
            else "single"
        check_dims({t.name: t.embeddings.dim for t in used}, mode=self.mode)
        self._parts = [(t, rows[self.rows, j]) for j, t in enumerate(used)]

    @property
    def coverage(self) -> Coverage:
        """How many of the task's rows have vectors for all their genes, and which genes are missing."""
        return Coverage(n_covered=len(self.rows), n_task=self.n_task, fraction=len(self.rows) / max(self.n_task, 1),
                        missing_genes=self.missing)

    def matrix(self) -> tuple[Features, Basis | None]:
        """Features of the covered rows, shape (n_covered, n_features), and their preconditioning basis.

        Pair rows stay a `PairDesign` over the two tables: the logistic solver never builds their dense matrix
        (the closed-form ridge of regression tasks does).
        """
        (first, rows), *rest = self._parts
        if self.mode == "single":
            return first.vectors[rows], first.basis
        second, second_rows = rest[0]
        X = PairDesign((first.vectors, second.vectors), (rows, second_rows), self.mode)
        if self.mode == "concat":
            return X, first.basis.concat(second.basis)
        return X, first.basis if first is second else None


def summarise_folds(per_fold: list[dict[str, float]]) -> dict[str, MetricScores]:
    """Each metric's per-fold values with their mean and std (ddof=0)."""
    out = {}
    for metric in per_fold[0]:
        values = np.array([fold[metric] for fold in per_fold], dtype=np.float64)
        std = float(values.std())
        out[metric] = MetricScores(folds=values.tolist(), mean=float(values.mean()), std=std)
    return out


class ProbeEngine:
    """Fits and scores tasks against one checked table (and an optional partner table).

    An engine is built once per model: the tables are checked once, and it can be shipped to other processes
    (`genebench.distributed`) with its bases computed (`precompute`); the device is resolved where it runs.

    Args:
        embeddings: gene symbol -> vector table.
        settings: probe settings.
        partner_embeddings: vectors for non-gene entities of pair tasks.

    Raises:
        EmbeddingError: unusable embeddings (see `check_embeddings`).
    """

    def __init__(self, embeddings: GeneEmbeddings, settings: ProbeSettings,
                 partner_embeddings: GeneEmbeddings | None = None) -> None:
        self.settings = settings
        self.tables = [_Table(embeddings, "embeddings", settings.scale),
                       _Table(partner_embeddings, "partner_embeddings", settings.scale)
                       if partner_embeddings is not None else None]
        self.device = _resolve_device(settings.device)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "device": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.device = _resolve_device(self.settings.device)

    def precompute(self) -> ProbeEngine:
        """Compute the tables' preconditioning bases now, so that every process that receives the engine shares
        them instead of computing them again."""
        with threadpool_limits(1, user_api="blas"):  # as every probe computes: the same bits on any machine
            for table in self.tables:
                if table is not None:
                    table.basis  # noqa: B018 (computed on first access)
        return self

    def score_unit(self, unit: Sequence[Task]) -> Iterator[TaskScores]:
        """Score one unit of `task_units`: its fitted task, then the derived tasks scored from that fit."""
        task, *children = unit
        result, held_out, features = self.score(task)
        yield result
        for child in children:
            derived = self.score_derived(child, task, held_out, features,
                                         parent_unconverged=int(result.diagnostics.get("n_not_converged", 0)))
            if derived is None:
                logger.info("task '%s': rows or folds differ from parent '%s'; fitting it alone", child.name,
                            task.name)
                derived = self.score(child)[0]
            yield derived

    def score(self, task: Task) -> tuple[TaskScores, np.ndarray | None, _Features | None]:
        """Fit and score one task; also return its held-out scores and features (for derived tasks).

        Problems of this task alone (no vectors for its partner entities, pair vectors of different
        lengths, too few rows, a single-class fold) become its `skipped` reason, never an exception.
        """
        start = time.perf_counter()
        try:
            features = _Features(task, self.tables, self.settings)
        except EmbeddingError as exc:
            logger.warning("task '%s' skipped: %s", task.name, exc)
            coverage = Coverage(n_covered=0, n_task=len(task.fold_ids), fraction=0.0)
            return TaskScores(task=task, main_score=main_score_for(task), coverage=coverage, skipped=str(exc),
                              seconds=time.perf_counter() - start), None, None
        result, labels, folds = self._covered(task, features)
        result.diagnostics = {"embeddings": self.tables[0].report}
        held_out = None
        if result.skipped is None:
            X, basis = features.matrix()
            held_out, fit_info = self._fit(task, X, labels, folds, basis)
            result.diagnostics |= fit_info | pooled_diagnostic(task.metadata, labels, held_out)
            result.scores = self._metrics(task, labels, folds, held_out, features)
            result.held_out, result.rows = held_out, features.rows
        else:
            logger.warning("task '%s' skipped: %s", task.name, result.skipped)
        result.seconds = time.perf_counter() - start
        return result, held_out, features

    def _covered(self, task: Task, features: _Features) -> tuple[TaskScores, np.ndarray, np.ndarray]:
        """The task's result with its coverage (and `skipped` when its covered rows cannot be scored, or under
        family folds when no family split exists, `family_unscorable`), and the labels and folds of those rows."""
        result = TaskScores(task=task, main_score=main_score_for(task), coverage=features.coverage)
        labels, folds = task.labels[features.rows], np.asarray(task.fold_ids)[features.rows]
        unscorable = task.metadata.family_unscorable if self.settings.scheme == "family" else None
        result.skipped = unscorable or check_labels(task.metadata.type, labels, folds,
                                                    min_covered=self.settings.min_covered)
        return result, labels, folds

    def _fit(self, task: Task, X: Features, labels: np.ndarray, folds: np.ndarray,
             basis: Basis | None) -> tuple[np.ndarray, dict[str, Any]]:
        info, s = task_type(task.metadata.type), self.settings
        if not info.is_classification:
            return fit_ridge(X, labels, folds, alpha=s.ridge_alpha, scale=s.scale), {"solver": "ridge (closed form)"}
        multinomial = info.is_multiclass and s.categorical == "multinomial"
        n_columns = max(len(task.metadata.label_names), int(labels.max()) + 1) if info.is_multiclass else 1
        Y = labels if multinomial else info.indicators(labels, n_columns)
        fit = fit_logistic(X, Y, folds, multinomial=multinomial, C=s.C, tol=s.tol, max_iter=s.max_iter,
                           memory=s.memory, scale=s.scale, basis=basis, device=self.device)
        proba = fit.proba
        if info.is_multiclass and not multinomial:
            proba = proba / proba.sum(axis=1, keepdims=True)
        n_bad = int((~fit.converged).sum())
        if n_bad:
            logger.warning("task '%s': %d of %d probes did not reach tol=%g in max_iter=%d", task.name, n_bad,
                           fit.converged.size, s.tol, s.max_iter)
        diagnostics = {"solver": "lbfgs, multinomial" if multinomial else "lbfgs, one probe per column",
                       "device": self.device or "cpu", "n_iter_max": int(fit.n_iter.max()),
                       "n_iter_mean": round(float(fit.n_iter.mean()), 2), "n_not_converged": n_bad}
        return proba if info.has_columns else proba[:, 0], diagnostics

    def _metrics(self, task: Task, labels: np.ndarray, folds: np.ndarray, held_out: np.ndarray,
                 features: _Features) -> dict[str, MetricScores]:
        kind = task.metadata.type
        readout = task.entities[features.rows, 1] if is_ordered_pair(task) else None
        per_fold = []
        for k in range(int(folds.max()) + 1):
            test = folds == k
            if not task_type(kind).is_classification:
                per_fold.append(regression_scores(labels[test], held_out[test]))
            else:
                per_fold.append(classification_scores(labels[test], held_out[test], task_type=kind,
                                                       groups=None if readout is None else readout[test],
                                                       multilabel_auc=self.settings.multilabel_auc))
        return summarise_folds(per_fold)

    def score_derived(self, task: Task, parent: Task, parent_held_out: np.ndarray | None,
                      parent_features: _Features | None, *, parent_unconverged: int = 0) -> TaskScores | None:
        """Score a derived binary task from its parent's fit; None when there is no fit or rows or folds differ.

        Its `n_not_converged` is its parent's (`parent_unconverged`): a score from an unconverged fit is one too.
        """
        start = time.perf_counter()
        label = task.name.split(";", 1)[1] if ";" in task.name else None
        names = list(parent.metadata.label_names)
        same = np.array_equal(parent.entities, task.entities)  # as a derived task is built: its parent's genes
        idx = np.arange(len(task.entities)) if same else pd.Index(np.asarray(parent.entities, dtype=str)).get_indexer(
            np.asarray(task.entities, dtype=str))
        reusable = parent_held_out is not None and parent_features is not None and label in names
        if not reusable or (idx < 0).any() or not np.array_equal(np.asarray(parent.fold_ids)[idx], task.fold_ids):
            return None
        features = parent_features if same else _Features(task, self.tables, self.settings)
        result, labels, folds = self._covered(task, features)
        if result.skipped is None:
            position = np.full(len(parent.entities), -1)
            position[parent_features.rows] = np.arange(len(parent_features.rows))
            column = parent_held_out[position[idx[features.rows]], names.index(label)]
            result.scores = self._metrics(task, labels, folds, column, features)
            result.held_out, result.rows = column, features.rows
            result.diagnostics = {"solver": f"reused the fit of parent '{parent.name}'",
                                  "embeddings": self.tables[0].report, "n_not_converged": parent_unconverged,
                                  **pooled_diagnostic(task.metadata, labels, column)}
        result.seconds = time.perf_counter() - start
        return result


def task_units(tasks: Sequence[Task]) -> list[list[Task]]:
    """Group tasks into units of work: each fitted task, followed by the derived tasks scored from its fit.

    A derived binary task whose parent is not among `tasks` is fitted alone, as its own unit.

    Examples:
        >>> [[t.name for t in unit] for unit in task_units(tasks)]  # doctest: +SKIP
        [['Pathways', 'Pathways;Immune System', ...], ['TF vs non-TF']]
    """
    names = {task.name for task in tasks}
    is_child = [task.metadata.is_derived and task.metadata.parent in names for task in tasks]
    units = {task.name: [task] for task, child in zip(tasks, is_child) if not child}
    for task, child in zip(tasks, is_child):
        if child:
            units[task.metadata.parent].append(task)
    return list(units.values())


def iter_task_scores(tasks: Sequence[Task], embeddings: GeneEmbeddings, settings: ProbeSettings | None = None, *,
                     partner_embeddings: GeneEmbeddings | None = None) -> Iterator[TaskScores]:
    """Score tasks, yielding each result as soon as its unit of work is done (in no fixed order).

    Derived binary tasks whose parent is among `tasks` are scored from the parent's fit (they share its
    genes and folds), right after it; the others are fitted as binary tasks. Embeddings are checked once.
    Units of work (`task_units`) run on one thread per core, largest first, each with one BLAS thread, so a
    task's scores are the same bits whatever the core count, the other tasks of the run or the engine (Ray).

    Args:
        tasks: the tasks to score.
        embeddings: gene symbol -> vector table.
        settings: probe settings (defaults when None).
        partner_embeddings: vectors for non-gene entities of pair tasks (e.g. diseases).

    Raises:
        EmbeddingError: unusable embeddings (see `check_embeddings`), before any task runs.
    """
    engine = ProbeEngine(embeddings, settings or ProbeSettings(), partner_embeddings).precompute()
    with core_threads(1 if engine.device else None) as pool:
        units = sorted(task_units(tasks), key=unit_cost, reverse=True)
        for done in as_completed([pool.submit(lambda unit: list(engine.score_unit(unit)), unit) for unit in units]):
            yield from done.result()


def unit_cost(unit: Sequence[Task]) -> int:
    """A unit's relative probing cost: its fitted task's rows times label columns."""
    task = unit[0]
    return len(task.entities) * max(1, len(task.metadata.label_names) if task_type(task.metadata.type).has_columns
                                    else 1)


def evaluate_tasks(tasks: Sequence[Task], embeddings: GeneEmbeddings, settings: ProbeSettings | None = None, *,
                   partner_embeddings: GeneEmbeddings | None = None) -> list[TaskScores]:
    """Score every task (see `iter_task_scores`); the results in the order of `tasks`."""
    position = {task.name: i for i, task in enumerate(tasks)}
    scored = iter_task_scores(tasks, embeddings, settings, partner_embeddings=partner_embeddings)
    return sorted(scored, key=lambda scores: position[scores.task.name])


def evaluate_task(task: Task, embeddings: GeneEmbeddings, settings: ProbeSettings | None = None,
                  partner_embeddings: GeneEmbeddings | None = None) -> TaskScores:
    """Score one task: fit its probes per fold and compute every metric per fold, mean and std.

    Args:
        task: the task.
        embeddings: gene symbol -> vector table.
        settings: probe settings (defaults when None).
        partner_embeddings: vectors for non-gene entities of pair tasks.

    Returns:
        The task's `TaskScores` (with `skipped` set instead of scores when it cannot be scored).
    """
    return evaluate_tasks([task], embeddings, settings, partner_embeddings=partner_embeddings)[0]
