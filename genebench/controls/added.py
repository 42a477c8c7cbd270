"""What a model adds over a gene's name: the "added over names" score, with a bootstrap over gene families.

Under family folds, the name control's held-out logit for each row (`BenchmarkData.control_predictions`) is held
fixed as an offset, and a two-parameter logistic fit, ``logit P(y) = name logit + a + b * logit(model score)``,
learns inside the same folds how much weight the model's held-out score deserves beside it. The score is the AUC
of that stacked prediction minus the AUC of the name logit alone, per fold on the same rows, averaged like the
main score (per label weighted by positives, then over folds). A model that only re-reads the name gets b near 0
and scores about 0; it cannot take AUC off the names, as one L2 probe over [name features, model vectors] does
when the vectors are wide (the README's "What a score means" measures both).

Uncertainty is a cluster bootstrap over HGNC gene families, the units family folds hold out (genes of one
family are not independent draws): family f's Poisson(1) weight in draw b is a fixed function of (f, b, seed), so
draws pair across tasks and models and a mean over tasks has a CI from the per-draw means (`mean_with_ci`). Each
draw also refits the stacking slope of every fold under its weights, so the interval holds the refit's variance
as well as the held-out rows'. A draw is the first-order (influence-function) expansion in the weights of the
weighted AUC difference and of each fold's slope, one matrix product per task, the AUC moving with the slope as
exact AUCs on a grid of slopes say (`_refit_shifts`); `tests/test_added.py` pins it against the exact weighted
AUC, and `benchmarks/bench_understanding.py` measures its coverage on random vectors.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from genebench.tasks.families import symbol_stem
from genebench.tasks.task import Task
from genebench.tasks.types import task_type

N_BOOT = 200
"""Bootstrap draws per task by default."""
_CLIP = 1e-7
_GRID = 5
"""Slopes per fold and column, spanning the draws' refitted ones, at which the AUC is computed exactly (besides the
fitted one) to find how fast it moves with the slope."""
METHODS = {
    "family bootstrap, slopes refitted": "Poisson(1) weights per HGNC gene family; each draw refits the stacking "
                                          "slope of every fold (the default)",
    "gene bootstrap, slopes refitted": "Poisson(1) weights per gene; each draw refits the stacking slopes",
    "family bootstrap": "Poisson(1) weights per HGNC gene family; the fitted stacking slopes held fixed",
    "gene bootstrap": "Poisson(1) weights per gene; the fitted stacking slopes held fixed (before issue #32: its "
                      "per-task intervals excluded 0 for 14% of tasks with random vectors)",
}
"""Interval methods, by the name a record's `method` holds."""
_POISSON_CDF = np.cumsum([np.exp(-1.0) / np.prod(np.arange(1, k + 1, dtype=float)) for k in range(20)])


class AddedOverNames(BaseModel):
    """Added over names on one task: the stacked AUC minus the name control's, and its bootstrap.

    Attributes:
        value: combined minus names; None when `skipped`.
        low, high: the 95% percentile interval of `draws`.
        names, combined: the two AUCs, on the rows both the model and the name control scored.
        n_rows: those rows.
        n_boot, seed: the bootstrap; draws of equal (n_boot, seed) and `method` pair across tasks and models.
        method: how the draws were made (`METHODS`); results written before it was recorded hold "gene bootstrap".
        draws: `value` under each draw's weights, rounded to 1e-4.
        skipped: why it could not be computed.
    """

    model_config = ConfigDict(extra="forbid")

    value: float | None = None
    low: float | None = None
    high: float | None = None
    names: float | None = None
    combined: float | None = None
    n_rows: int = 0
    n_boot: int = N_BOOT
    seed: int = 0
    method: str = "gene bootstrap"
    draws: list[float] = Field(default_factory=list)
    skipped: str | None = None


def added_over_names(task: Task, rows: np.ndarray, model_scores: np.ndarray, name_scores: np.ndarray,
                     families: Mapping[str, str] | None = None, *, refit: bool = True, n_boot: int = N_BOOT,
                     seed: int = 0) -> AddedOverNames:
    """Added over names on `task` under the folds it carries (family folds, as the pipeline loads it).

    Args:
        task: the task, its `folds` the scheme scored.
        rows: shape (n_covered,), the task rows the model scored.
        model_scores: the model's held-out probabilities on `rows`: shape (n_covered,) (binary types) or
            (n_covered, n_columns) (multi-label, categorical).
        name_scores: the name control's held-out logits (log-probabilities for categorical) on every task row:
            shape (n_rows,) or (n_rows, n_columns); NaN where it could not score a row.
        families: symbol -> family key (`BenchmarkData.gene_families`), the bootstrap's units (a pair's by its
            first gene); None: each gene its own unit.
        refit: whether each draw refits the stacking slopes (else they are held at the fitted ones).
        n_boot: bootstrap draws.
        seed: the bootstrap's seed.

    Returns:
        The record, its `method` naming the interval's (`METHODS`); `skipped` says why when the task has no AUC
        (regression), no held-out fold for every row (train-test) or no scorable fold.

    Examples:
        >>> from genebench.tasks.metadata import TaskMetadata
        >>> meta = TaskMetadata(name="t", category="localization", type="binary", family="f", source_url="u",
        ...                     source_version="1", license="l", citation="c")
        >>> y = np.tile([0, 1], 20)
        >>> task = Task(meta, np.array([f"G{i}" for i in range(40)]), y, np.arange(40) // 10)
        >>> names = np.where(y == 1, 0.5, -0.5) + np.linspace(-1, 1, 40)
        >>> added_over_names(task, np.arange(40), np.full(40, 0.5), names, n_boot=20).value
        0.0
    """
    info = task_type(task.metadata.type)
    method = ("family" if families is not None else "gene") + " bootstrap" + (", slopes refitted" if refit else "")
    base = {"n_boot": n_boot, "seed": seed, "method": method}
    folds = np.asarray(task.fold_ids)[rows]
    if not info.is_classification:
        return AddedOverNames(**base, skipped="a regression task has no AUC to add to")
    if (folds < 0).any():
        return AddedOverNames(**base, skipped="train-test split: training rows have no held-out scores to fit on")
    names = np.asarray(name_scores, dtype=np.float64).reshape(len(task.fold_ids), -1)[rows]
    y = info.indicators(np.asarray(task.labels)[rows], names.shape[1]).astype(bool)
    if info.is_multiclass:
        names = _logit_from_log_probability(names)
    x = _logit(np.asarray(model_scores, dtype=np.float64).reshape(len(rows), -1)[:, : names.shape[1]])
    keep = np.isfinite(names).all(axis=1) & np.isfinite(x).all(axis=1)
    y, names, x, folds, rows = y[keep], names[keep], x[keep], folds[keep], np.asarray(rows)[keep]
    combined, slopes = _stacked(y, names, x, folds)
    name_auc, name_psi = auc_with_influence(y, names, folds)
    both_auc, both_psi = auc_with_influence(y, combined, folds)
    if not (np.isfinite(name_auc) and np.isfinite(both_auc)):
        return AddedOverNames(**base, n_rows=int(keep.sum()), skipped="no fold has both classes on the scored rows")
    value = both_auc - name_auc
    genes = np.asarray(task.entities)[rows]
    genes = (genes[:, 0] if genes.ndim == 2 else genes).astype(str)
    if families is not None:
        unique, of_row = np.unique(genes, return_inverse=True)
        genes = np.array([families.get(g) or "stem:" + symbol_stem(g) for g in unique.tolist()])[of_row]
    draws = value + bootstrap_shifts(genes, both_psi - name_psi, n_boot, seed)
    if refit:
        draws += _refit_shifts(y, names, x, folds, genes, slopes, n_boot, seed)
    low, high = np.quantile(draws, [0.025, 0.975])
    return AddedOverNames(**base, value=round(value, 6), low=round(float(low), 6), high=round(float(high), 6),
                          names=round(name_auc, 6), combined=round(both_auc, 6), n_rows=int(keep.sum()),
                          draws=np.round(draws, 4).tolist())


def mean_with_ci(values: np.ndarray, draws: np.ndarray, groups: np.ndarray | None = None) -> tuple[float, float, float]:
    """The mean over tasks of added over names and its 95% percentile interval from the per-draw means: draws pair by
    gene, so genes shared by tasks move together. With `groups`, tasks of a group are averaged first, then groups.

    Args:
        values: shape (n_tasks,), each task's value.
        draws: shape (n_tasks, n_boot), each task's bootstrap draws (one (n_boot, seed) for all).
        groups: shape (n_tasks,), a group label per task (default: each task its own).

    Returns:
        (mean, low, high); NaNs when there is no task.

    Examples:
        >>> mean_with_ci(np.array([0.1, 0.3]), np.array([[0.0, 0.2], [0.2, 0.4]]))
        (0.2, 0.105, 0.295)
    """
    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return float("nan"), float("nan"), float("nan")
    draws = np.asarray(draws, dtype=np.float64).reshape(len(values), -1)
    codes = pd.factorize(np.asarray(groups if groups is not None else np.arange(len(values))))[0]
    share = 1.0 / np.bincount(codes)[codes] / (codes.max() + 1)  # each task's weight in the mean over groups
    low, high = np.quantile(share @ draws, [0.025, 0.975])
    return round(float(share @ values), 12), round(float(low), 12), round(float(high), 12)


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, _CLIP, 1 - _CLIP)
    return np.log(p) - np.log1p(-p)


def _logit_from_log_probability(log_p: np.ndarray) -> np.ndarray:
    """One-vs-rest logits from log-probabilities."""
    log_p = np.minimum(log_p, np.log1p(-_CLIP))
    return log_p - np.log1p(-np.exp(log_p))


@dataclass(frozen=True)
class _Slopes:
    """What a draw needs to refit the stacking slopes: per fold (sorted) and column, the fitted left-out slope, and
    the first-order change of that slope per unit of a row's residual ``r`` and of ``r * x`` (the 2x2 inverse
    Hessian's slope row), with each row's residual at the fit on every row, shape (n, n_columns)."""

    fold_ids: np.ndarray
    slope: np.ndarray
    per_r: np.ndarray
    per_rx: np.ndarray
    residual: np.ndarray


def _stacked(y: np.ndarray, offset: np.ndarray, x: np.ndarray, folds: np.ndarray, *,
             n_iter: int = 25) -> tuple[np.ndarray, _Slopes]:
    """Per column, ``offset + b_k * x``: b_k the slope of ``logit P(y) = offset + a + b x`` (L2 0.5 b^2, as the probe's
    C=1) fitted without fold k's rows, predicted on them. One Newton fit on every row, then one Newton step per fold
    that takes its rows out (the fold's share of the gradient and Hessian), all columns at once. Also returns the
    slopes and their first-order response to row weights (`_Slopes`).

    Shapes: (n, n_columns) for y, offset, x; (n,) for folds.
    """
    by_fold = np.argsort(folds, kind="stable")
    folds = folds[by_fold]
    y, offset, x = (np.asarray(v[by_fold], dtype=np.float32) for v in (y, offset, x))
    a, b = np.zeros(y.shape[1]), np.zeros(y.shape[1])
    active, fitting = np.arange(y.shape[1]), (y, offset, x)  # the columns still fitted, and their data
    for _ in range(n_iter):
        step_a, step_b = _solve(_newton_sums(*fitting, a[active], b[active])[None])
        a[active] += step_a[0]
        b[active] += step_b[0]
        done = np.abs(step_b[0]) <= 1e-4 * (1.0 + np.abs(b[active]))  # the slope sets the ranking; a helps fit it
        if done.all():
            break
        if done.any():
            active = active[~done]
            fitting = tuple(v[:, active] for v in (y, offset, x))
    starts = np.flatnonzero(np.r_[True, folds[1:] != folds[:-1]])
    per_fold = _newton_sums(y, offset, x, a, b, starts)
    left_out = per_fold.sum(axis=0)[None] - per_fold  # each fold's rows left out: (n_folds, 5, n_columns)
    _, step_b = _solve(left_out)
    fold_of_row = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(folds)]))
    stacked = np.empty(offset.shape)
    stacked[by_fold] = offset + (b + step_b).astype(np.float32)[fold_of_row] * x
    h_aa, h_ab, h_bb = left_out[:, 2], left_out[:, 3], left_out[:, 4]
    det = h_aa * h_bb - h_ab * h_ab
    det = np.where(det > 1e-12, det, np.inf)
    residual = np.empty(offset.shape)
    residual[by_fold] = y - 1.0 / (1.0 + np.exp(-np.clip(offset + a + b * x, -80.0, 80.0)))
    return stacked, _Slopes(folds[starts], b + step_b, -h_ab / det, h_aa / det, residual)


def _refit_shifts(y: np.ndarray, names: np.ndarray, x: np.ndarray, folds: np.ndarray, units: np.ndarray,
                  slopes: _Slopes, n_boot: int, seed: int) -> np.ndarray:
    """Each draw's change of the fold-mean AUC when every fold's stacking slope is refitted under the draw's unit
    weights, to first order, shape (n_boot,). A refitted slope is the fitted one plus its first-order change (one
    Newton step, linear in the weights, so `bootstrap_shifts`' exact product); a fold's positive-weighted AUC of
    ``names + slope * x`` moves with it by its least-squares slope over exact AUCs at `_GRID` slopes spanning the
    draws and the fitted one (an AUC is a step function of the slope, so no derivative at one point)."""
    n_folds, n_columns = slopes.slope.shape
    fold_index = np.searchsorted(slopes.fold_ids, folds)
    parts = np.concatenate([slopes.residual, slopes.residual * x], axis=1)  # (n, 2 * n_columns)
    table, rows = _table_rows(units, n_boot, seed)
    weights = table.weights  # once: another thread may add units meanwhile
    by_fold = np.stack([_exact_shifts(weights, rows[fold_index == k], parts[fold_index == k])
                        for k in range(n_folds)])  # (n_folds, n_boot, 2 * n_columns)
    outside = by_fold.sum(axis=0)[None] - by_fold  # each fold's training rows: the other folds
    refitted = slopes.slope[:, None] + (slopes.per_r[:, None] * outside[..., :n_columns]
                                        + slopes.per_rx[:, None] * outside[..., n_columns:])
    shifts, scored = np.zeros(n_boot), 0
    for k in range(n_folds):
        at = fold_index == k
        positives = y[at].sum(axis=0).astype(np.float64)
        defined = (positives > 0) & (positives < at.sum())
        if not defined.any():
            continue
        scored += 1
        low = np.minimum(refitted[k].min(axis=0), slopes.slope[k])
        high = np.maximum(refitted[k].max(axis=0), slopes.slope[k])
        grid = np.vstack([low + t * (high - low) for t in np.linspace(0.0, 1.0, _GRID)] + [slopes.slope[k]])
        aucs = np.stack([_column_aucs(y[at], names[at] + g * x[at]) for g in grid])  # (_GRID + 1, n_columns)
        weight = np.where(defined & (high > low), positives, 0.0) / positives[defined].sum()
        centred = grid - grid.mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            moves = (centred * aucs).sum(axis=0) / (centred * centred).sum(axis=0)  # AUC per unit of slope
        shifts += (refitted[k] - slopes.slope[k]) @ np.where(weight > 0, weight * moves, 0.0)
    return shifts / max(scored, 1)


def _column_aucs(y: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Each column's AUC (NaN without both classes), tied scores ranked in row order: a grid point and the fitted
    slope are ranked alike, and ``names + slope * x`` rarely ties where ``slope * x`` moves it."""
    order = np.argsort(np.ascontiguousarray(scores.T, dtype=np.float32), axis=1, kind="stable")
    ranked_positive = np.take_along_axis(np.ascontiguousarray(y.T), order, axis=1)
    positives = y.sum(axis=0).astype(np.float64)
    negatives = len(y) - positives
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = (ranked_positive @ np.arange(1.0, len(y) + 1) - positives * (positives + 1) / 2) / (positives * negatives)
    return np.where((positives > 0) & (negatives > 0), auc, np.nan)


def _newton_sums(y: np.ndarray, offset: np.ndarray, x: np.ndarray, a: np.ndarray, b: np.ndarray,
                 starts: np.ndarray | None = None) -> np.ndarray:
    """Gradient (g_a, g_b) and Hessian (h_aa, h_ab, h_bb) of the penalised log-likelihood per column: over all rows,
    shape (5, n_columns), or per block of rows beginning at `starts` (the L2 term shared out), (n_blocks, 5,
    n_columns). Float32 arrays in, float64 sums out."""
    p = np.multiply(x, b.astype(np.float32))
    p += offset
    p += a.astype(np.float32)
    np.clip(p, -80.0, 80.0, out=p)  # exp stays finite in float32
    np.negative(p, out=p)
    np.exp(p, out=p)
    p += 1.0
    np.reciprocal(p, out=p)
    w = p * (1.0 - p)
    r = np.subtract(y, p, out=p)
    wx = w * x
    parts = (r, r * x, w, wx, wx * x)
    if starts is None:
        sums = np.stack([part.sum(axis=0, dtype=np.float64) for part in parts])
        return sums + np.stack([0 * b, -b, 0 * b, 0 * b, 1 + 0 * b])
    sums = np.stack([np.add.reduceat(part, starts, axis=0, dtype=np.float64) for part in parts], axis=1)
    sums[:, 1] -= b / len(starts)
    sums[:, 4] += 1.0 / len(starts)
    return sums


def _solve(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Newton step of each 2x2 system in `sums` (..., 5, n_columns)."""
    g_a, g_b, h_aa, h_ab, h_bb = (sums[..., i, :] for i in range(5))
    det = h_aa * h_bb - h_ab * h_ab
    det = np.where(det > 1e-12, det, np.inf)
    return (h_bb * g_a - h_ab * g_b) / det, (h_aa * g_b - h_ab * g_a) / det


def auc_with_influence(y: np.ndarray, scores: np.ndarray, folds: np.ndarray) -> tuple[float, np.ndarray]:
    """The main-score AUC (per fold: per column, weighted by positives; then the mean over folds) and each row's
    influence on it: the first-order change of the AUC when a row's weight grows by 1 (DeLong's placements).

    Args:
        y: shape (n, n_columns), 0/1.
        scores: shape (n, n_columns).
        folds: shape (n,), fold of each row (>= 0).

    Returns:
        (auc, influence of shape (n,)); NaN and zeros when no fold has a column with both classes.
    """
    y = np.asarray(y, dtype=bool)
    influence = np.zeros(len(y))
    fold_aucs = []
    for k in np.unique(folds):
        at = np.flatnonzero(folds == k)
        auc, psi = _fold_auc(y[at], scores[at])
        if np.isfinite(auc):
            fold_aucs.append(auc)
            influence[at] = psi
    if not fold_aucs:
        return float("nan"), influence
    return float(np.mean(fold_aucs)), influence / len(fold_aucs)


def _fold_auc(y: np.ndarray, scores: np.ndarray) -> tuple[float, np.ndarray]:
    """One fold's positive-weighted AUC over its columns with both classes, and each row's influence, from one sort
    per column. A row's placement is the share of the other class ranked below it (ties count half); rows of one
    class in one tie share it, so everything is computed per tie group."""
    n = len(y)
    positives = y.sum(axis=0).astype(np.float64)
    negatives = n - positives
    defined = (positives > 0) & (negatives > 0)
    if not defined.any():
        return float("nan"), np.zeros(n)
    y, scores = np.ascontiguousarray(y[:, defined].T), np.ascontiguousarray(scores[:, defined].T, dtype=np.float32)
    positives, negatives = positives[defined], negatives[defined]
    order = np.argsort(scores, axis=1)
    ordered = np.take_along_axis(scores, order, axis=1).ravel()
    is_positive = np.take_along_axis(y, order, axis=1).ravel()
    starts = np.ones(ordered.size, dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    starts[::n] = True  # a tie never spans two columns
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    pos_in = np.add.reduceat(is_positive, first, dtype=np.float64)
    neg_in = np.diff(np.r_[first, ordered.size]) - pos_in
    base = np.searchsorted(first, np.arange(len(y)) * n)  # each column's first group
    per_column = np.diff(np.r_[base, len(first)])  # groups per column, to spread a column's values over them
    pos_below, neg_below = np.cumsum(pos_in) - pos_in, np.cumsum(neg_in) - neg_in
    pos_below -= np.repeat(pos_below[base], per_column)
    neg_below -= np.repeat(neg_below[base], per_column)
    below_positive = neg_below + 0.5 * neg_in  # a positive's negatives below it, per group
    below_negative = pos_below + 0.5 * pos_in
    auc = np.add.reduceat(pos_in * below_positive, base) / (positives * negatives)
    weight = positives / positives.sum()
    at_auc, n_pos, n_neg, at_weight = np.repeat(np.stack([auc, positives, negatives, weight]), per_column, axis=1)
    psi_positive = (below_positive / n_neg - at_auc) * (at_weight / n_pos)
    psi_negative = (1.0 - below_negative / n_pos - at_auc) * (at_weight / n_neg)
    psi = np.where(is_positive, psi_positive[group], psi_negative[group])
    return float(auc @ weight), np.bincount(order.ravel(), weights=psi, minlength=n)


class _WeightTable:
    """Each gene's Poisson(1) weight in every draw, shape (n_boot, n_genes) (a draw's weights contiguous, for one
    matrix-vector product), computed once per process for each (n_boot, seed) and gene."""

    def __init__(self, n_boot: int, seed: int) -> None:
        with np.errstate(over="ignore"):  # modulo 2**64, as meant
            base = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
        self.salts = _splitmix64(base + np.arange(n_boot, dtype=np.uint64))
        self.row_of: dict[str, int] = {}
        self.weights = np.empty((n_boot, 0), dtype=np.float64)
        self.lock = threading.Lock()

    def rows(self, genes: np.ndarray) -> np.ndarray:
        """Row of each of `genes` in `weights`, adding new genes."""
        names = genes.tolist()
        with self.lock:
            try:
                return np.fromiter(map(self.row_of.__getitem__, names), np.int64, len(names))
            except KeyError:  # genes not drawn yet
                pass
            new = list(dict.fromkeys(g for g in names if g not in self.row_of))
            keys = np.array([int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "little")
                             for g in new], dtype=np.uint64)
            uniform = (_splitmix64(keys[:, None] ^ self.salts[None, :]) >> np.uint64(11)) * 2.0**-53
            fresh = np.searchsorted(_POISSON_CDF, uniform, side="right").astype(np.float64)
            self.row_of.update(zip(new, range(len(self.row_of), len(self.row_of) + len(new))))
            self.weights = np.concatenate([self.weights, fresh.T], axis=1)
            return np.fromiter(map(self.row_of.__getitem__, names), np.int64, len(names))


_TABLES: dict[tuple[int, int], _WeightTable] = {}


def gene_weights(genes: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Poisson(1) weight of each gene in each draw, shape (n_boot, n): a function of (gene, draw, seed) only, so a
    gene weighs the same in every task and model.

    Examples:
        >>> w = gene_weights(np.array(["TP53", "BRCA1", "TP53"]), 4, 0)
        >>> w.shape, bool((w[:, 0] == w[:, 2]).all())
        ((4, 3), True)
    """
    table, rows = _table_rows(genes, n_boot, seed)
    return table.weights[:, rows]


def bootstrap_shifts(units: np.ndarray, influence: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Each draw's first-order change of statistics whose per-row influence is `influence`, shape (n,) or (n, m):
    the sum over rows of (the row's unit weight - 1) times its influence (rows of one unit move together). Shape
    (n_boot,) or (n_boot, m).

    Each unit's influence is rounded to a multiple of one power of two per statistic (under 1e-9 of it,
    relatively), so small that every partial sum of the product is a whole number of them, exact in float64: the
    draws are the same bits whatever order the weight table holds the units in, which depends on the tasks that
    added units before and on which thread got there first."""
    table, rows = _table_rows(units, n_boot, seed)
    return _exact_shifts(table.weights, rows, influence)


def _exact_shifts(weights: np.ndarray, rows: np.ndarray, influence: np.ndarray) -> np.ndarray:
    """`bootstrap_shifts` on a weight table's `weights` and the table rows of the influences' units."""
    influence = np.asarray(influence, dtype=np.float64)
    flat = influence.reshape(len(influence), -1)
    order = np.argsort(rows, kind="stable")
    starts = np.flatnonzero(np.r_[True, rows[order][1:] != rows[order][:-1]])
    per_unit = np.add.reduceat(flat[order], starts, axis=0)  # in row order within a unit: the same sums every run
    bound = np.abs(per_unit).sum(axis=0) * len(_POISSON_CDF)  # over the largest |weight - 1|: every partial sum's
    step = np.ldexp(1.0, np.frexp(np.where(bound > 0, bound, 1.0))[1] - 52)  # bound / step <= 2**52: exact
    shifts = ((weights[:, rows[order][starts]] - 1.0) @ np.rint(per_unit / step)) * step
    return shifts.reshape((len(weights), *influence.shape[1:]))


def _table_rows(genes: np.ndarray, n_boot: int, seed: int) -> tuple[_WeightTable, np.ndarray]:
    """The weight table of (n_boot, seed) and the row of each of `genes` in it."""
    table = _TABLES.setdefault((n_boot, seed), _WeightTable(n_boot, seed))
    return table, table.rows(np.asarray(genes))


def _splitmix64(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser: a bijective mix of 64-bit integers into well-spread ones."""
    with np.errstate(over="ignore"):
        z = np.asarray(z, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))
