"""Validate once at the boundary: embeddings and labels are checked here, and solvers trust them after.

Embedding problems that make every score meaningless (non-finite values, conflicting duplicates,
mismatched dimensions) raise `EmbeddingError` before any task runs. Label problems belong to one task;
`check_labels` returns the reason to skip it, which the run records in that task's result.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from genebench.embeddings import GeneEmbeddings
from genebench.errors import EmbeddingError
from genebench.tasks.types import task_type as type_info

logger = logging.getLogger(__name__)

_SHOW = 5
_COARSE = 1e4
"""A column whose spread is under this many float32 steps of its offset keeps fewer than ~10^3 levels of its values."""


def _listed(values: list[Any]) -> str:
    more = f" and {len(values) - _SHOW} more" if len(values) > _SHOW else ""
    return f"{values[:_SHOW]}{more}"


def check_embeddings(embeddings: GeneEmbeddings, *, name: str = "embeddings") -> tuple[GeneEmbeddings, dict[str, Any]]:
    """Reject unusable embeddings; merge identical duplicates and drop constant columns.

    Args:
        embeddings: the table to check.
        name: how messages refer to it.

    Returns:
        The cleaned table and a report (`n_genes`, `duplicates_merged`, `constant_columns_dropped`).

    Raises:
        EmbeddingError: no genes or dimensions, NaN or inf values, or a symbol listed twice with different
            vectors.
    """
    symbols, vectors = np.asarray(embeddings.symbols, dtype=str), embeddings.vectors
    if vectors.shape[0] == 0 or vectors.shape[1] == 0:
        raise EmbeddingError(f"{name}: expected at least one gene and one dimension, found shape {vectors.shape}; "
                             "check that the adapter encoded any gene.")
    bad = ~np.isfinite(vectors).all(axis=1)
    if bad.any():
        raise EmbeddingError(f"{name}: expected finite vectors, found NaN or inf in {int(bad.sum())} genes "
                             f"({_listed(symbols[bad].tolist())}); drop those rows or re-encode them.")
    order = np.argsort(symbols, kind="stable")
    first = np.ones(len(symbols), dtype=bool)
    first[order[1:]] = symbols[order[1:]] != symbols[order[:-1]]
    merged = 0
    if not first.all():
        keep_row = {}
        conflicts = []
        for row in order:
            kept = keep_row.setdefault(symbols[row], row)
            if kept != row and not np.array_equal(vectors[kept], vectors[row]):
                conflicts.append(str(symbols[row]))
        if conflicts:
            raise EmbeddingError(f"{name}: expected one vector per symbol, found different vectors for "
                                 f"{len(set(conflicts))} duplicated symbols ({_listed(sorted(set(conflicts)))}); "
                                 "keep one row per symbol.")
        merged = int((~first).sum())
        logger.info("%s: merged %d duplicate rows with identical vectors", name, merged)
    constant = np.flatnonzero((vectors == vectors[:1]).all(axis=0))
    if len(constant) == vectors.shape[1]:
        raise EmbeddingError(f"{name}: expected vectors that differ between genes, found every one of the "
                             f"{vectors.shape[1]} columns constant; check the adapter's output.")
    if len(constant):
        logger.debug("%s: dropped %d constant columns %s", name, len(constant), _listed(constant.tolist()))
    spread, offset = vectors.std(axis=0, dtype=np.float64), np.abs(vectors.mean(axis=0, dtype=np.float64))
    coarse = np.flatnonzero((spread > 0) & (spread < _COARSE * np.finfo(np.float32).eps * offset))
    if len(coarse):
        logger.warning("%s: %d columns %s vary by less than float32 resolves next to their offset (spread %.3g, "
                       "offset %.3g): their values are rounded to a few levels; centre the vectors before saving them",
                       name, len(coarse), _listed(coarse.tolist()), spread[coarse[0]], offset[coarse[0]])
    keep = np.flatnonzero(first)
    cleaned = GeneEmbeddings(symbols=embeddings.symbols[keep], vectors=np.delete(vectors[keep], constant, axis=1),
                             model=embeddings.model, missing=embeddings.missing)
    report = {"n_genes": len(keep), "duplicates_merged": merged, "constant_columns_dropped": constant.tolist()}
    return cleaned, report


def check_dims(dims: dict[str, int], *, mode: str) -> None:
    """Raise unless tables whose vectors are averaged share one dimension.

    Args:
        dims: table name -> vector length.
        mode: "mean" (dimensions must match) or "concat" (anything goes).
    """
    if mode == "mean" and len(set(dims.values())) > 1:
        raise EmbeddingError(f"pair features: averaging needs one vector length, found {dims}; "
                             "use ProbeSettings(pair_mode='concat') or tables of the same dimension.")


def check_labels(task_type: str, labels: np.ndarray, folds: np.ndarray, *, min_covered: int) -> str | None:
    """Why a task cannot be scored on its covered rows, or None when it can.

    Args:
        task_type: the task's type.
        labels: shape (n_covered,) or (n_covered, n_labels), the covered rows' labels.
        folds: shape (n_covered,), their folds (-1 = always trained on).
        min_covered: fewest rows worth scoring.

    Returns:
        A one-line reason (recorded as the result's `skipped`), or None.
    """
    if len(labels) < min_covered:
        return f"too few covered rows: {len(labels)} < min_covered={min_covered}"
    n_splits = int(folds.max()) + 1 if len(folds) else 0
    if n_splits < 1:
        return "no held-out rows: every covered row is train-only"
    kind = type_info(task_type)
    if not kind.is_classification:
        return None
    for k in range(n_splits):
        train, test = labels[folds != k], labels[folds == k]
        if len(test) == 0:
            return f"empty test fold: fold {k} has no covered rows"
        if kind.is_multilabel:
            if not ((train.min(axis=0) == 0) & (train.max(axis=0) == 1)).any():
                return f"single-class training fold: in fold {k} no label has both classes"
            continue
        if len(np.unique(train)) < 2:
            return f"single-class training fold: fold {k} trains on class {np.unique(train).tolist()} only"
        if len(np.unique(test)) < 2:
            return f"single-class test fold: fold {k} tests on class {np.unique(test).tolist()} only, AUC undefined"
    return None
