"""Batched probes: every fold and label column of a task solved as one batch of L2 logistic problems, and ridge.

`fit_logistic` solves one problem per (split, label column), or one softmax problem per split. Each problem
minimises scikit-learn's `LogisticRegression(C)` objective, ``mean(log loss) + ||w||^2 / (2 C n_train)`` with a
free intercept, on the raw features (``scale="none"``, the paper's protocol) or on features standardised with
its split's training rows (``scale="standard"``). Centring and scaling are folded into the coefficients, so the
feature matrix is never copied per split; centring never moves the optimum, since the intercept is free.

The optimiser is L-BFGS run on every problem in lockstep (one matrix product per step serves all of them), with
per-problem line searches, histories and stopping, preconditioned by the Böhning curvature bound built from an
eigenbasis of the feature covariance (correlation when standardised), scaled per class and label by the loss
curvature at its prior. A problem leaves the batch as soon as it converges, and a failed line-search step is
retried on the problems that failed it alone. The stopping rule is scikit-learn's lbfgs one (every gradient entry
at most `tol`). Every problem starts from zero weights and its prior: never from a fit that saw its held-out rows,
since a solve stopped at `tol` keeps what its start knew along flat directions (a warm start from the all-rows fit
let random vectors score AUC 1.0 on rare labels).

Small, nearly unregularised binary problems (large features at the paper's fixed C: the ridge 1 / (C n) is at most
1e-6 in rescaled units) are then finished with Newton's method in float64, from the L-BFGS point: there, a float32
stop at `tol` leaves the weights far from the optimum along flat directions, and so the AUC. Ordinary features never
qualify, so their fits are unchanged.

A gene-pair task's features can be a `PairDesign`, which the numpy path multiplies through the embedding tables
without building the (pairs x features) matrix, and sparse features (word counts, indicators) can be a SciPy
sparse matrix, multiplied as such; statistics over their rows are taken a block at a time.

Arrays are written against the array API (numpy on the CPU, torch when a device is given), so one code path
serves both. All reductions have a fixed order, so a run repeats bit for bit on the same machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import array_api_compat
import numpy as np
import scipy.linalg
import scipy.sparse

from genebench.probe.design import Features, PairDesign, as_float32, dense
from genebench.probe.settings import Scale

_ARMIJO = 1e-4
_NOISE = 1e-6
"""Relative float32 noise of an objective value: a step that stays within it and does not overshoot is accepted
(Hager and Zhang's approximate Wolfe condition), so problems near their optimum never stall on rounding."""
_MAX_BACKTRACK = 30
_BASIS_ROWS = 4096
_BASIS_RANK = 256
_BLOCK_ROWS = 65536
_CHUNK_VALUES = 1 << 23
"""At most this many (row, column) values in one block of logits: bounds the solver's temporary memory."""
_CACHE_VALUES = 1 << 16
"""About this many values in one block of the loss's elementwise passes, so that their temporaries stay in cache."""
_NEWTON_RIDGE = 1e-6
"""Binary problems whose ridge 1 / (C n_train) is at most this (in rescaled units, where the features' mean
curvature is 1) are nearly unregularised: float32 L-BFGS stopped at `tol` can sit far from their optimum along
flat directions, so they are finished with Newton's method in float64."""
_NEWTON_FLOPS = 2**30
"""The finish runs only if one Hessian of all its problems, P n (d+1)^2 multiply-adds, stays within this."""
_NEWTON_STEP = 1e-6
"""Newton's method stops once a step moves the parameters by at most this fraction of their norm."""
_NEWTON_ITER = 100


@dataclass(frozen=True)
class Basis:
    """Eigenbasis of a feature covariance (or correlation) matrix; it only preconditions, never moves an optimum.

    Attributes:
        vectors: shape (n_features, rank), orthonormal columns.
        values: shape (rank,), the matching eigenvalues.
        tail: the mean eigenvalue of the remaining directions.
    """

    vectors: np.ndarray
    values: np.ndarray
    tail: float = 0.0

    @classmethod
    def from_features(cls, X: Features, *, scale: Scale = "none", max_rows: int = _BASIS_ROWS,
                      rank: int = _BASIS_RANK) -> Basis:
        """The top-`rank` eigenpairs of `X`'s covariance (correlation for ``scale="standard"``).

        Taken from at most `max_rows` evenly strided rows. The remaining directions share one eigenvalue,
        `tail` (their mean), so the trace is kept.
        """
        step = max(1, -(-X.shape[0] // max_rows))
        rows = dense(X[::step]).astype(np.float64)
        rows = rows - rows.mean(axis=0)
        if scale == "standard":
            spread = rows.std(axis=0)
            rows = rows / np.where(spread > 1e-12, spread, 1.0)
        if len(rows) >= rows.shape[1]:
            values, vectors = scipy.linalg.eigh(rows.T @ rows / len(rows), driver="evd")
        else:
            _, singular, vt = np.linalg.svd(rows, full_matrices=False)
            values, vectors = singular**2 / len(rows), vt.T
        order = np.argsort(values)[::-1]
        values, vectors = np.maximum(values[order], 0.0), vectors[:, order]
        rest = rows.shape[1] - min(rank, len(values))
        tail = float(values[rank:].sum() / rest) if rest else 0.0
        return cls(vectors=vectors[:, :rank], values=values[:rank], tail=tail)

    def rescaled(self, unit: float) -> Basis:
        """The basis of the features divided by `unit` (same directions, eigenvalues over `unit` squared)."""
        return Basis(vectors=self.vectors, values=self.values / unit**2, tail=self.tail / unit**2)

    def concat(self, other: Basis) -> Basis:
        """The block-diagonal basis of concatenated features [self | other]."""
        d1, d2 = self.vectors.shape[0], other.vectors.shape[0]
        vectors = np.zeros((d1 + d2, self.vectors.shape[1] + other.vectors.shape[1]))
        vectors[:d1, : self.vectors.shape[1]] = self.vectors
        vectors[d1:, self.vectors.shape[1]:] = other.vectors
        tail = (self.tail * (d1 - len(self.values)) + other.tail * (d2 - len(other.values))) / max(
            d1 + d2 - len(self.values) - len(other.values), 1)
        return Basis(vectors=vectors, values=np.concatenate([self.values, other.values]), tail=tail)


@dataclass(frozen=True)
class LogisticFit:
    """What one batched logistic solve returns.

    Attributes:
        proba: shape (n_rows, n_columns), float64, each row scored by the model of the fold that holds it out;
            NaN for rows that are never held out.
        n_iter: shape (n_folds, n_groups), iterations per problem (L-BFGS, plus Newton's where it finished).
        converged: shape (n_folds, n_groups), whether each problem met `tol` at its solution (measured in float64
            where Newton finished it).
    """

    proba: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


def fold_masks(folds: np.ndarray) -> np.ndarray:
    """Training masks, shape (n_rows, n_splits): row i trains split k unless it is held out by it."""
    folds = np.asarray(folds)
    return folds[:, None] != np.arange(int(folds.max()) + 1)[None, :]


def _row_blocks(X: Features):
    """(rows, dense rows) pieces of `X`: an array whole, anything else `_BLOCK_ROWS` rows at a time."""
    if isinstance(X, np.ndarray):
        yield slice(None), X
        return
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        rows = slice(start, start + _BLOCK_ROWS)
        yield rows, dense(X[rows])


def fold_stats(X: Features, train: np.ndarray, *, scale: Scale) -> tuple[np.ndarray, np.ndarray]:
    """Per-split mean and scale of the training rows, shape (n_splits, n_features) each.

    The scale is 1 for ``scale="none"``, else the standard deviation; a feature constant on a split's training
    rows gets scale 1, as scikit-learn's `StandardScaler` does, so it contributes nothing. Dense features are
    summed globally centred, one matrix product per moment; other features' means are one product with `X.T`.
    """
    weights = train.astype(X.dtype)
    counts = train.sum(axis=0)[:, None].astype(np.float64)
    if not isinstance(X, np.ndarray) and scale == "none":
        mean = (X.T @ weights).T.astype(np.float64) / counts
        return mean, np.ones_like(mean)
    centre = sum(block.sum(axis=0, dtype=np.float64) for _, block in _row_blocks(X)) / X.shape[0]
    shift = np.zeros((train.shape[1], X.shape[1]))
    squares = np.zeros((train.shape[1], X.shape[1]))
    for rows, block in _row_blocks(X):
        centred = block - centre.astype(X.dtype)
        shift += (weights[rows].T @ centred).astype(np.float64)
        if scale == "standard":
            squares += (weights[rows].T @ (centred * centred)).astype(np.float64)
    shift, squares = shift / counts, squares / counts
    if scale == "none":
        return shift + centre, np.ones_like(shift)
    variance = np.maximum(squares - shift**2, 0.0)
    constant = variance <= 1000 * np.finfo(X.dtype).eps * squares
    return shift + centre, np.where(constant, 1.0, np.sqrt(variance))


def _centred_squares(X: np.ndarray) -> tuple[np.ndarray, float]:
    """Column means of `X` and the sum of squares of its centred values, in float64, a cache-sized block at a time."""
    centre = X.sum(axis=0, dtype=np.float64) / max(len(X), 1)
    step = max(1, _CACHE_VALUES // max(X.shape[1], 1))
    squares = 0.0
    for start in range(0, len(X), step):
        block = (X[start:start + step] - centre).ravel()
        squares += float(block @ block)
    return centre, squares


def _unit(squares: float, size: int) -> float:
    """The root mean square of `size` values whose squares sum to `squares`; 1 when that is 0 or not finite."""
    unit = float(np.sqrt(squares / max(size, 1)))
    return unit if np.isfinite(unit) and unit > 0 else 1.0


def rescaled(X: Features) -> tuple[Features, float]:
    """`X` centred and divided by one number, its `unit` (the root mean square of its centred values), in float32.

    Centring happens in float64 before the cast, so rows that differ only far below a large common offset stay
    apart, and the solver works on values near 1 whatever the features' scale: its float32 products keep their
    precision and `tol` means the same precision at any scale. Sparse features are only divided (centring would
    fill them in); a `PairDesign`'s tables are centred and divided each (the intercept absorbs any shift).

    Returns:
        The rescaled features and `unit`; the raw-feature objective at C equals the rescaled one at C * unit**2.
    """
    if isinstance(X, PairDesign):
        tables = [t if scipy.sparse.issparse(t) else np.asarray(t) for t in X.tables]
        stats = [(None, float((t.data.astype(np.float64) ** 2).sum())) if scipy.sparse.issparse(t)
                 else _centred_squares(t) for t in tables]
        unit = _unit(sum(squares for _, squares in stats), sum(t.shape[0] * t.shape[1] for t in tables))
        scaled = [as_float32(t / unit) if c is None else _centred(t, c, unit) for t, (c, _) in zip(tables, stats)]
        second = scaled[0] if X.tables[1] is X.tables[0] else scaled[1]
        return PairDesign((scaled[0], second), X.rows, X.mode), unit
    if scipy.sparse.issparse(X):
        X = scipy.sparse.csr_array(X, dtype=np.float64)
        unit = _unit(float((X.data**2).sum()), X.shape[0] * X.shape[1])
        return as_float32(X / unit), unit
    X = np.asarray(X)
    centre, squares = _centred_squares(X)
    unit = _unit(squares, X.size)
    return _centred(X, centre, unit), unit


def _centred(X: np.ndarray, centre: np.ndarray, unit: float) -> np.ndarray:
    """``(X - centre) / unit`` in float32, computed in float64 a cache-sized block at a time."""
    out = np.empty(X.shape, dtype=np.float32)
    step = max(1, _CACHE_VALUES // max(X.shape[1], 1))
    for start in range(0, len(X), step):
        rows = slice(start, start + step)
        out[rows] = (X[rows] - centre) / unit
    return out


def fit_logistic(X: Features, Y: np.ndarray, folds: np.ndarray, *, multinomial: bool, C: float,
                 tol: float, max_iter: int, memory: int = 10, scale: Scale = "none", basis: Basis | None = None,
                 device: str | None = None) -> LogisticFit:
    """Fit L2 logistic probes for every split and label column at once; return held-out probabilities.

    Per split k, rows with ``folds != k`` train and rows with ``folds == k`` are scored. Each problem is
    scikit-learn's `LogisticRegression(C=C, tol=tol)` fitted on those rows (after a per-split `StandardScaler`
    when ``scale="standard"``), solved until every gradient entry is at most `tol`; small, nearly unregularised
    binary problems are then finished with Newton's method in float64 (see the module docstring).

    Args:
        X: shape (n_rows, n_features), raw features: dense, a `PairDesign` or sparse.
        Y: shape (n_rows, n_columns) of 0/1 targets (independent binary problems), or (n_rows,) class
            indices in [0, n_classes) when `multinomial` (one softmax problem per split).
        folds: shape (n_rows,), held-out split of each row; -1 = always trained on.
        multinomial: softmax over classes instead of independent sigmoids.
        C: inverse regularisation strength.
        tol: gradient tolerance.
        max_iter: iteration cap per problem.
        memory: L-BFGS history length.
        scale: "none" (raw features, the paper's probe) or "standard" (standardised per split).
        basis: preconditioning eigenbasis of `X` for this `scale` (computed from `X` when None).
        device: None for numpy; a torch device ("cpu", "cuda") to run the same code in torch.

    Returns:
        A `LogisticFit`; `proba` has one column per label column (or class).

    Examples:
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]] * 5)
        >>> fit = fit_logistic(X, np.array([[0], [0], [1], [1]] * 5), np.repeat(np.arange(5), 4),
        ...                    multinomial=False, C=1.0, tol=1e-6, max_iter=100)
        >>> bool(fit.proba[3, 0] > 0.5 > fit.proba[0, 0])
        True
    """
    X, unit = rescaled(X)
    if device is not None:  # torch runs on a dense matrix
        X = as_float32(dense(X))
    if scale == "none":  # the same objective in rescaled units: w' = unit * w, so ||w||^2 / C = ||w'||^2 / (C unit^2)
        C = C * unit**2
        basis = None if basis is None else basis.rescaled(unit)
    folds = np.asarray(folds)
    train = fold_masks(folds)
    n_splits = train.shape[1]
    if multinomial:
        classes = np.asarray(Y, dtype=np.int64)
        Y = np.zeros((len(classes), int(classes.max()) + 1), dtype=np.float32)
        Y[np.arange(len(classes)), classes] = 1.0
    Y = np.asarray(Y, dtype=np.float32)
    mean, spread = fold_stats(X, train, scale=scale)
    basis = basis if basis is not None else Basis.from_features(X, scale=scale)
    shared = _Shared(X, Y, train, mean, spread, basis, multinomial=multinomial, C=C, device=device)
    n_columns = 1 if multinomial else Y.shape[1]
    split = np.repeat(np.arange(n_splits), n_columns)
    column = np.tile(np.arange(n_columns), n_splits)
    problems = _Problems(shared, split, column)
    params, n_iter, gnorm, _ = problems.minimise(problems.initial(), tol=tol, max_iter=max_iter, memory=memory)
    converged = gnorm <= tol
    if _newton_finishes(X.shape, problems.size, multinomial=multinomial, C=C, n_train=shared.n_train):
        exact = _Problems(_Shared(dense(X).astype(np.float64), Y, train, mean, spread, basis, multinomial=False,
                                  C=C, device=device), split, column)
        params, extra, gnorm, settled = exact.minimise(params, tol=0.0, max_iter=_NEWTON_ITER, memory=memory,
                                                       newton=True)  # to its step
        # a nearly unregularised problem's gradient is tiny far from its optimum: it has converged only when
        # Newton's steps settled there (a stalled line search, or the iteration cap, leaves it unconverged)
        converged = settled | (gnorm == 0)
        n_iter += extra
    held_out = np.full((X.shape[0], Y.shape[1]), np.nan)
    for k in range(n_splits):
        rows = np.flatnonzero(folds == k)
        if rows.size:
            held_out[rows] = problems.held_out_proba(params, k, rows)
    shape = (n_splits, n_columns)
    return LogisticFit(proba=held_out, n_iter=n_iter.reshape(shape), converged=converged.reshape(shape))


def _newton_finishes(shape: tuple[int, int], n_problems: int, *, multinomial: bool, C: float,
                     n_train: np.ndarray) -> bool:
    """Whether a solve's problems are small and nearly unregularised enough for the float64 Newton finish."""
    n, d = shape
    return not multinomial and C * n_train.min() >= 1 / _NEWTON_RIDGE and n_problems * n * (d + 1) ** 2 <= _NEWTON_FLOPS


class _Shared:
    """What every problem of one solve shares: the features, targets, split masks and statistics."""

    def __init__(self, X: Features, Y: np.ndarray, train: np.ndarray, mean: np.ndarray,
                 spread: np.ndarray, basis: Basis, *, multinomial: bool, C: float, device: str | None) -> None:
        if device is None:
            self.xp = array_api_compat.array_namespace(Y)
            put: Any = self.xp.asarray
        else:
            import torch

            self.xp = array_api_compat.array_namespace(torch.zeros(0))
            put = lambda a: torch.asarray(a, device=device)  # noqa: E731
        self.put = put
        self.to_numpy = lambda a: np.asarray(a.cpu()) if device is not None else np.asarray(a)
        self.X = put(X) if isinstance(X, np.ndarray) else X
        self.Y, self.train = put(Y), put(train.astype(np.float32))
        self.n_train = train.sum(axis=0).astype(np.float64)  # (S,)
        self.mean, self.spread = mean, spread  # (S, d)
        self.multinomial, self.C = multinomial, C
        self.counts = train.T.astype(np.float64) @ Y.astype(np.float64)  # (S, M) positives per split
        self.V, self.values, self.tail = put(basis.vectors.astype(np.float64)), put(basis.values)[:, None], basis.tail
        self.n, self.d = X.shape
        self.width = Y.shape[1] if multinomial else 1  # columns per problem
        self.device = array_api_compat.device(self.Y)


class _Problems:
    """A batch of logistic problems (split s, label column c) over shared features; parameters (d+1, P, width)."""

    def __init__(self, shared: _Shared, split: np.ndarray, column: np.ndarray) -> None:
        self.shared, self.split, self.column = shared, np.asarray(split), np.asarray(column)
        put = shared.put
        self.size = len(self.split)
        self.mean = put(np.ascontiguousarray(shared.mean[self.split].T))[:, :, None]  # (d, P, 1)
        self.spread = put(np.ascontiguousarray(shared.spread[self.split].T))[:, :, None]
        self.n_train = put(shared.n_train[self.split])[:, None]  # (P, 1)
        self.split_index, self.column_index = put(self.split), put(self.column)
        share = shared.counts[self.split] / shared.n_train[self.split, None]
        share = share if shared.multinomial else share[np.arange(self.size), self.column][:, None]
        self.share = np.clip(share, 1e-6, 1 - 1e-6)  # (P, width) training share of each column
        # curvature of each column's loss at its prior: scales the preconditioner per class and label
        self.curvature = put(np.clip(self.share * (1 - self.share), 1e-3, 0.25))

    def subset(self, keep: np.ndarray) -> _Problems:
        """The problems at positions `keep`."""
        return _Problems(self.shared, self.split[keep], self.column[keep])

    def group(self, values: Any) -> Any:
        """Per-problem totals (P, 1) of per-column values (P, width)."""
        return self.shared.xp.sum(values, axis=-1, keepdims=True)

    def dot(self, a: Any, b: Any) -> Any:
        """Per-problem inner products of two parameter arrays (d+1, P, width)."""
        return self.group(self.shared.xp.sum(a * b, axis=0))

    def initial(self) -> Any:
        """Zero weights; intercepts at the training log-odds."""
        sh, xp = self.shared, self.shared.xp
        share = sh.put(self.share)
        params = xp.zeros((sh.d + 1, self.size, sh.width), dtype=xp.float64, device=sh.device)
        params[sh.d] = xp.log(share) if sh.multinomial else xp.log(share) - xp.log1p(-share)
        return params

    def _chunks(self) -> list[np.ndarray]:
        per_chunk = max(1, _CHUNK_VALUES // (self.shared.n * self.shared.width))
        return [np.arange(i, min(i + per_chunk, self.size)) for i in range(0, self.size, per_chunk)]

    def _logits(self, params: Any, X: Any, *, exact: bool = False) -> Any:
        """Decision values of `X`'s rows under every problem, shape (rows, P, width).

        `exact` adds the intercept in float64: a strongly regularised probe's rows differ by far less than float32
        resolves next to its intercept, and held-out scores must keep that order.
        """
        xp, sh = self.shared.xp, self.shared
        coef = params[: sh.d] / self.spread  # back to the rescaled features: centring and scaling folded in
        offset = xp.reshape(params[sh.d] - xp.sum(self.mean * coef, axis=0), (1, -1))
        product = X @ xp.reshape(xp.astype(coef, X.dtype), (sh.d, -1))
        z = xp.astype(product, xp.float64) + offset if exact else product + xp.astype(offset, X.dtype)
        return xp.reshape(z, (X.shape[0], self.size, sh.width))

    def evaluate(self, params: Any) -> tuple[Any, Any]:
        """Objective (P, 1) and gradient (d+1, P, width), a block of problems at a time."""
        xp, sh = self.shared.xp, self.shared
        chunks = self._chunks()
        if len(chunks) > 1:
            parts = [self.subset(idx).evaluate(xp.take(params, sh.put(idx), axis=1)) for idx in chunks]
            return xp.concat([v for v, _ in parts], axis=0), xp.concat([g for _, g in parts], axis=1)
        z = self._logits(params, sh.X)
        loss = xp.empty((sh.n, self.size, 1), dtype=z.dtype, device=sh.device)
        residual = xp.empty(z.shape, dtype=z.dtype, device=sh.device)
        step = max(1, _CACHE_VALUES // (self.size * sh.width))
        for start in range(0, sh.n, step):  # elementwise passes over blocks that stay in cache
            rows = slice(start, start + step)
            loss[rows], residual[rows] = self._pointwise(z[rows], rows)
        data = xp.sum(loss, axis=0, dtype=xp.float64) / self.n_train
        weights = params[: sh.d]
        value = data + self.group(xp.sum(weights**2, axis=0)) / (2 * sh.C * self.n_train)
        raw = xp.astype(xp.reshape(sh.X.T @ xp.reshape(residual, (sh.n, -1)), (sh.d, self.size, sh.width)),
                        xp.float64)
        total = xp.sum(residual, axis=0, dtype=xp.float64)
        n_train = self.n_train[None]
        grad = (raw - self.mean * total) / self.spread / n_train + weights / (sh.C * n_train)
        return value, xp.concat([grad, (total / self.n_train)[None]], axis=0)

    def _pointwise(self, z: Any, rows: slice) -> tuple[Any, Any]:
        """The masked loss (rows, P, 1) and residual (rows, P, width) of logits `z` of the training rows `rows`."""
        xp, sh = self.shared.xp, self.shared
        mask = xp.take(sh.train[rows], self.split_index, axis=1)[:, :, None]
        if sh.multinomial:
            y = sh.Y[rows][:, None, :]
            top = xp.max(z, axis=-1, keepdims=True)
            e = xp.exp(z - top)
            total = xp.sum(e, axis=-1, keepdims=True)
            pointwise = top + xp.log(total) - xp.sum(y * z, axis=-1, keepdims=True)
            return pointwise * mask, (e / total - y) * mask
        # elementwise passes that vectorise (no where, no log1p)
        y = xp.take(sh.Y[rows], self.column_index, axis=1)[:, :, None]
        e = xp.exp(-xp.abs(z))
        u = 1 + e
        softplus = xp.log(u) + (e - (u - 1)) / u  # log1p(e): log(u), corrected for the rounding of u
        pointwise = xp.maximum(z, 0.0) - y * z + softplus
        residual = (xp.exp(xp.minimum(z, 0.0)) / u - y) * mask  # sigmoid(z): 1 / u, or e / u below 0
        if z.dtype == xp.float64:  # Newton's finish: sigmoid(z) - 1 as -sigmoid(-z), precise where z >> 0
            residual = xp.where(y > 0, -xp.exp(-xp.maximum(z, 0.0)) / u * mask, residual)
        return pointwise * mask, residual

    def held_out_proba(self, params: Any, split: int, rows: np.ndarray) -> np.ndarray:
        """Probabilities of `rows` under the problems of `split`, shape (len(rows), columns)."""
        sh, xp = self.shared, self.shared.xp
        mine = np.flatnonzero(self.split == split)
        part = self.subset(mine)
        if isinstance(sh.X, PairDesign):
            X = sh.X.take(rows)
        else:
            X = sh.X[rows] if scipy.sparse.issparse(sh.X) else xp.take(sh.X, sh.put(rows), axis=0)
        z = part._logits(xp.take(params, sh.put(mine), axis=1), X, exact=True)
        if sh.multinomial:
            e = xp.exp(z - xp.max(z, axis=-1, keepdims=True))
            proba = (e / xp.sum(e, axis=-1, keepdims=True))[:, 0, :]
        else:
            e = xp.exp(-xp.abs(z))
            proba = xp.where(z >= 0, 1 / (1 + e), e / (1 + e))[:, :, 0]  # problems of a split are in column order
        return sh.to_numpy(proba)

    def precondition(self, grad: Any) -> Any:
        """Apply the inverse of ``c X'X / n + I / (C n)`` per column, X'X / n taken from the basis.

        c is each column's loss curvature at its prior, p (1 - p): a per-class (and per-label) scaling of the
        Böhning bound, which L-BFGS then corrects as it learns the true curvature.
        """
        sh, xp = self.shared, self.shared.xp
        ridge = 1 / (sh.C * self.n_train)  # (P, 1)
        # float64: these factors can reach C n, which float32 rounding would amplify
        project = xp.reshape(sh.V.T @ xp.reshape(grad[: sh.d], (sh.d, -1)), (-1, self.size, sh.width))
        inside = 1 / (self.curvature[None] * sh.values[:, :, None] + ridge[None])
        outside = None
        if sh.V.shape[1] < sh.d:  # the directions outside the basis share its `tail` eigenvalue
            outside = 1 / (self.curvature * sh.tail + ridge)[None]
            inside = inside - outside  # V (inside - outside) V' g + outside g: two products, not three
        weights = xp.reshape(sh.V @ xp.reshape(inside * project, (project.shape[0], -1)), (sh.d, self.size, sh.width))
        if outside is not None:
            weights = weights + outside * grad[: sh.d]
        return xp.concat([weights, grad[sh.d:] / self.curvature[None]], axis=0)

    def minimise(self, params: Any, *, tol: float, max_iter: int, memory: int,
                 newton: bool = False) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
        """Lockstep L-BFGS (Newton's method when `newton`) from `params`; a problem leaves the batch once it
        converges or stalls.

        Returns the solutions (d+1, P, width), iterations (P,), largest gradient entries there (P,) and, with
        `newton`, which problems ended on a Newton step that barely moved them (P,; else all False).
        """
        xp, put = self.shared.xp, self.shared.put
        solution = xp.asarray(params, copy=True)
        n_iter = np.zeros(self.size, dtype=np.int64)
        active, where = self, np.arange(self.size)
        value, grad = active.evaluate(params)
        gnorm = self.shared.to_numpy(active.gnorm(grad))
        done = gnorm <= tol
        ended_settled = np.zeros(self.size, dtype=bool)
        steps: list[tuple[Any, Any, Any]] = []
        gamma = xp.ones((self.size, 1), dtype=xp.float64, device=self.shared.device)
        for _ in range(max_iter):
            if done.any():
                finished, keep = put(np.flatnonzero(done)), np.flatnonzero(~done)
                solution[:, put(where[done])] = xp.take(params, finished, axis=1)
                if keep.size == 0:
                    break
                kept = put(keep)
                where, active = where[keep], active.subset(keep)
                params, grad = xp.take(params, kept, axis=1), xp.take(grad, kept, axis=1)
                value, gamma = xp.take(value, kept, axis=0), xp.take(gamma, kept, axis=0)
                steps = [(xp.take(s, kept, axis=1), xp.take(y, kept, axis=1), xp.take(r, kept, axis=0))
                         for s, y, r in steps]
            settled = np.zeros(len(where), dtype=bool)
            if newton:  # Newton's steps shrink quadratically: one that barely moves the parameters is the last
                direction = -active.newton_step(params, grad)
                small = active.dot(direction, direction) <= _NEWTON_STEP**2 * active.dot(params, params)
                settled = self.shared.to_numpy(small)[:, 0]
            else:
                direction = -active._two_loop(grad, steps, gamma)
            slope = active.dot(grad, direction)
            uphill = slope >= 0
            if bool(xp.any(uphill)):
                direction = xp.where(uphill[None], -active.precondition(grad), direction)
                slope = active.dot(grad, direction)
            candidate, (new_value, new_grad), stalled = active._line_search(params, value, grad, direction, slope)
            if not newton:
                s, y = candidate - params, new_grad - grad
                sy = active.dot(s, y)
                useful = sy > 1e-12 * xp.sqrt(active.dot(s, s) * active.dot(y, y))
                rho = xp.where(useful, 1 / xp.where(useful, sy, 1.0), 0.0)
                gamma = xp.where(useful, sy / xp.where(useful, active.dot(y, active.precondition(y)), 1.0), gamma)
                steps = [*steps, (s, y, rho)][-memory:]
            n_iter[where] += 1
            params, value, grad = candidate, new_value, new_grad
            gnorm[where] = self.shared.to_numpy(active.gnorm(grad))
            done = (gnorm[where] <= tol) | stalled | settled
            ended_settled[where] = settled & ~stalled
        else:
            solution[:, put(where)] = params
        return solution, n_iter, gnorm, ended_settled

    def newton_step(self, params: Any, grad: Any) -> Any:
        """Newton's step per (binary) problem, ``H^-1 grad``, with the Hessian ``H`` built in `X`'s precision."""
        sh, xp = self.shared, self.shared.xp
        z = self._logits(params, sh.X)[..., 0]  # (n, P)
        e = xp.exp(-xp.abs(z))
        weight = e / (1 + e) ** 2 * xp.take(sh.train, self.split_index, axis=1) / self.n_train[:, 0]
        centred = (sh.X[None] - xp.permute_dims(self.mean, (1, 2, 0))) / xp.permute_dims(self.spread, (1, 2, 0))
        ones = xp.ones((self.size, sh.n, 1), dtype=centred.dtype, device=sh.device)
        A = xp.concat([centred, ones], axis=-1)  # (P, n, d+1)
        H = xp.permute_dims(A * xp.permute_dims(weight, (1, 0))[:, :, None], (0, 2, 1)) @ A
        ridge = xp.asarray(np.diag(np.arange(sh.d + 1) < sh.d), dtype=H.dtype, device=sh.device)  # not the intercept
        H = H + ridge / (sh.C * self.n_train)[:, :, None]
        return xp.permute_dims(xp.linalg.solve(H, xp.permute_dims(grad, (1, 0, 2))), (1, 0, 2))

    def _line_search(self, params: Any, value: Any, grad: Any, direction: Any,
                     slope: Any) -> tuple[Any, tuple[Any, Any], np.ndarray]:
        """Armijo backtracking from step 1; a retry evaluates only the problems that failed the previous step.

        Returns the accepted parameters, their objective and gradient, and which problems stalled (no step
        decreased the objective; they keep their parameters).
        """
        xp, put = self.shared.xp, self.shared.put
        candidate = params + direction
        new_value, new_grad = self.evaluate(candidate)
        ok = self._accept(value, slope, new_value, new_grad, direction, 1.0)
        step = 1.0
        for _ in range(_MAX_BACKTRACK):
            if ok.all():
                break
            step *= 0.5
            bad = np.flatnonzero(~ok)
            index = put(bad)
            part = self.subset(bad)
            part_direction = xp.take(direction, index, axis=1)
            retry = xp.take(params, index, axis=1) + step * part_direction
            retry_value, retry_grad = part.evaluate(retry)
            candidate[:, index], new_value[index], new_grad[:, index] = retry, retry_value, retry_grad
            ok[bad] = part._accept(xp.take(value, index, axis=0), xp.take(slope, index, axis=0), retry_value,
                                   retry_grad, part_direction, step)
        if ok.all():
            return candidate, (new_value, new_grad), ~ok
        stalled = ~ok
        index = put(np.flatnonzero(stalled))
        candidate[:, index] = xp.take(params, index, axis=1)
        new_value[index], new_grad[:, index] = xp.take(value, index, axis=0), xp.take(grad, index, axis=1)
        return candidate, (new_value, new_grad), stalled

    def _accept(self, value: Any, slope: Any, new_value: Any, new_grad: Any, direction: Any, step: float) -> np.ndarray:
        """Armijo's sufficient decrease, or the approximate Wolfe condition within float32 noise; shape (P,)."""
        xp = self.shared.xp
        armijo = new_value <= value + _ARMIJO * step * slope
        within_noise = new_value <= value + _NOISE * xp.abs(value)
        not_overshot = self.dot(new_grad, direction) <= (2 * _ARMIJO - 1) * slope
        return self.shared.to_numpy(armijo | (within_noise & not_overshot))[:, 0]

    def gnorm(self, grad: Any) -> Any:
        """Largest absolute gradient entry per problem, shape (P,)."""
        xp = self.shared.xp
        return xp.max(xp.reshape(xp.abs(grad), (-1, self.size, self.shared.width)), axis=(0, 2))

    def _two_loop(self, grad: Any, steps: list[tuple[Any, Any, Any]], gamma: Any) -> Any:
        """L-BFGS's inverse-Hessian product, per problem, seeded with the scaled preconditioner."""
        q, alphas = grad, []
        for s, y, rho in reversed(steps):
            alpha = rho * self.dot(s, q)
            q = q - alpha * y
            alphas.append(alpha)
        r = gamma * self.precondition(q)
        for (s, y, rho), alpha in zip(steps, reversed(alphas)):
            r = r + s * (alpha - rho * self.dot(y, r))
        return r


def fit_ridge(X: Features, y: np.ndarray, folds: np.ndarray, *, alpha: float, scale: Scale = "none") -> np.ndarray:
    """Ridge regression per split on raw (or per-split standardised) features; return held-out predictions.

    Matches scikit-learn's `Ridge(alpha)` (after a `StandardScaler` fitted on the training rows when
    ``scale="standard"``), solved in closed form in float64.

    Args:
        X: shape (n_rows, n_features).
        y: shape (n_rows,), float targets.
        folds: shape (n_rows,), held-out split per row; -1 = always trained on.
        alpha: L2 strength.
        scale: "none" or "standard".

    Returns:
        shape (n_rows,), held-out predictions (NaN for rows never held out).
    """
    X = dense(X).astype(np.float64)
    X = X - X.mean(axis=0)
    y = np.asarray(y, dtype=np.float64)
    folds = np.asarray(folds)
    train = fold_masks(folds)
    mean, spread = fold_stats(X, train, scale=scale)
    gram = X.T @ X
    cross = X.T @ y
    predictions = np.full(len(X), np.nan)
    for k in range(train.shape[1]):
        test = ~train[:, k]
        n_k = int(train[:, k].sum())
        y_mean = float(y[train[:, k]].mean())
        held_out = X[test]
        cov = gram - held_out.T @ held_out - n_k * np.outer(mean[k], mean[k])
        xy = cross - held_out.T @ y[test] - n_k * mean[k] * y_mean
        lhs = cov / np.outer(spread[k], spread[k]) + alpha * np.eye(X.shape[1])
        coef = np.linalg.solve(lhs, xy / spread[k])
        predictions[test] = ((held_out - mean[k]) / spread[k]) @ coef + y_mean
    return predictions
