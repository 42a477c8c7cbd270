"""Batched probes: one L2 logistic solve for every fold and label column of a task at once, and ridge.

`fit_logistic` solves F x M independent problems together (F folds, M label columns), or F softmax
problems of M classes. Each fold standardises with its own training rows; the standardisation is folded
into the coefficients, so the feature matrix is never copied per fold. The optimiser is L-BFGS run on
every problem in lockstep (one matrix product per step serves all of them), with per-problem line
searches, histories and stopping, preconditioned by the Böhning curvature bound built from an
eigenbasis of the feature correlation. The objective and stopping rule are scikit-learn's lbfgs ones,
so the optimum is the same; only the path to it differs.

A gene-pair task's features can be a `PairDesign`, which the numpy path multiplies through the embedding
tables without building the (pairs x features) matrix; statistics over its rows are taken a block at a time.

Arrays are written against the array API (numpy on the CPU, torch when a device is given), so one code
path serves both. All reductions have a fixed order, so a run repeats bit for bit on the same machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.externals import array_api_compat

from genebench.probe.design import PairDesign

_ARMIJO = 1e-4
_MAX_BACKTRACK = 30
_BASIS_ROWS = 4096
_BASIS_RANK = 256
_BLOCK_ROWS = 65536


@dataclass(frozen=True)
class Basis:
    """Eigenbasis of a feature correlation matrix; it only preconditions, it never changes an optimum.

    Attributes:
        vectors: shape (n_features, rank), orthonormal columns.
        values: shape (rank,), the matching eigenvalues.
    """

    vectors: np.ndarray
    values: np.ndarray
    tail: float = 0.0

    @classmethod
    def from_features(cls, X: np.ndarray | PairDesign, *, max_rows: int = _BASIS_ROWS,
                      rank: int = _BASIS_RANK) -> Basis:
        """The top-`rank` eigenpairs of `X`'s correlation, from at most `max_rows` evenly strided rows.

        The remaining directions share one eigenvalue, `tail` (their mean), so the trace is kept.
        """
        step = max(1, -(-X.shape[0] // max_rows))
        rows = np.asarray(X[::step], dtype=np.float64)
        scale = rows.std(axis=0)
        rows = (rows - rows.mean(axis=0)) / np.where(scale > 1e-12, scale, 1.0)
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
        proba: shape (n_rows, n_columns), each row scored by the model of the fold that holds it out;
            NaN for rows that are never held out.
        n_iter: shape (n_folds, n_groups), L-BFGS iterations per problem.
        converged: shape (n_folds, n_groups), whether each problem met `tol`.
    """

    proba: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


def fold_masks(folds: np.ndarray) -> np.ndarray:
    """Training masks, shape (n_rows, n_splits): row i trains split k unless it is held out by it."""
    folds = np.asarray(folds)
    return folds[:, None] != np.arange(int(folds.max()) + 1)[None, :]


def _row_blocks(X: np.ndarray | PairDesign):
    """(rows, dense rows) pieces of `X`: an array whole, a `PairDesign` `_BLOCK_ROWS` rows at a time."""
    if not isinstance(X, PairDesign):
        yield slice(None), X
        return
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        rows = slice(start, start + _BLOCK_ROWS)
        yield rows, X[rows]


def fold_stats(X: np.ndarray | PairDesign, train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-split mean and scale of the training rows, shape (n_splits, n_features) each.

    Computed on globally centred float32 features with one matrix product per moment. A feature constant on
    a split's training rows gets scale 1, as scikit-learn's `StandardScaler` does, so it contributes nothing.
    """
    weights = train.astype(X.dtype)
    centre = sum(block.sum(axis=0, dtype=np.float64) for _, block in _row_blocks(X)) / X.shape[0]
    counts = train.sum(axis=0)[:, None].astype(np.float64)
    shift = np.zeros((train.shape[1], X.shape[1]))
    squares = np.zeros((train.shape[1], X.shape[1]))
    for rows, block in _row_blocks(X):
        centred = block - centre.astype(X.dtype)
        shift += (weights[rows].T @ centred).astype(np.float64)
        squares += (weights[rows].T @ (centred * centred)).astype(np.float64)
    shift, squares = shift / counts, squares / counts
    variance = np.maximum(squares - shift**2, 0.0)
    constant = variance <= 1000 * np.finfo(X.dtype).eps * squares
    return shift + centre, np.where(constant, 1.0, np.sqrt(variance))


def fit_logistic(X: np.ndarray | PairDesign, Y: np.ndarray, folds: np.ndarray, *, multinomial: bool, C: float,
                 tol: float, max_iter: int, memory: int = 10, basis: Basis | None = None, device: str | None = None,
                 ) -> LogisticFit:
    """Fit L2 logistic probes for every split and label column at once; return held-out probabilities.

    Per split k, rows with ``folds != k`` train and rows with ``folds == k`` are scored. Each problem
    minimises ``mean(log loss) + ||w||^2 / (2 C n_train)`` over standardised features (intercept free),
    the objective of scikit-learn's `LogisticRegression(C=C)`, until every gradient entry is <= `tol`.

    Args:
        X: shape (n_rows, n_features), raw features (standardised here, per split), or a `PairDesign`.
        Y: shape (n_rows, n_columns) of 0/1 targets (independent binary problems), or (n_rows,) class
            indices in [0, n_classes) when `multinomial` (one softmax problem per split).
        folds: shape (n_rows,), held-out split of each row; -1 = always trained on.
        multinomial: softmax over classes instead of independent sigmoids.
        C: inverse regularisation strength.
        tol: gradient tolerance.
        max_iter: iteration cap per problem.
        memory: L-BFGS history length.
        basis: preconditioning eigenbasis of the features' correlation (computed from `X` when None).
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
    if device is not None or not isinstance(X, PairDesign):  # torch runs on a dense matrix
        X = np.ascontiguousarray(X, dtype=np.float32)
    train = fold_masks(folds)
    if multinomial:
        classes = np.asarray(Y, dtype=np.int64)
        Y = np.zeros((len(classes), int(classes.max()) + 1), dtype=np.float32)
        Y[np.arange(len(classes)), classes] = 1.0
    Y = np.asarray(Y, dtype=np.float32)
    mean, scale = fold_stats(X, train)
    basis = basis if basis is not None else Basis.from_features(X)
    problem = _Problem(X, Y, train, mean, scale, basis, multinomial=multinomial, C=C, device=device)
    params, n_iter, converged = problem.minimise(tol=tol, max_iter=max_iter, memory=memory)
    proba = problem.to_numpy(problem.probabilities(problem.logits(params)))
    held_out = np.full((X.shape[0], Y.shape[1]), np.nan, dtype=np.float32)
    rows = np.flatnonzero(np.asarray(folds) >= 0)
    held_out[rows] = proba[rows, np.asarray(folds)[rows]]
    return LogisticFit(proba=held_out, n_iter=problem.to_numpy(n_iter), converged=problem.to_numpy(converged))


class _Problem:
    """Every split's problem as one set of arrays, and the lockstep L-BFGS that solves them."""

    def __init__(self, X: np.ndarray | PairDesign, Y: np.ndarray, train: np.ndarray, mean: np.ndarray,
                 scale: np.ndarray, basis: Basis, *, multinomial: bool, C: float, device: str | None) -> None:
        if device is None:
            self.xp = array_api_compat.array_namespace(Y)
            put: Any = self.xp.asarray
        else:
            import torch

            self.xp = array_api_compat.array_namespace(torch.zeros(0))
            put = lambda a: torch.asarray(a, device=device)  # noqa: E731
        xp = self.xp
        self.multinomial = multinomial
        self.X, self.Y = X if isinstance(X, PairDesign) else put(X), put(Y)
        self.mask = put(train.astype(np.float32))[:, :, None]
        self.n_train = put(train.sum(axis=0).astype(np.float64))[:, None]  # (F, 1)
        self.mean, self.scale = put(mean.T.copy())[:, :, None], put(scale.T.copy())[:, :, None]  # (d, F, 1)
        self.C = C
        self.curvature = 0.5 if multinomial else 0.25
        self.V = put(basis.vectors.astype(np.float32))
        self.values = put(basis.values)[:, None]
        self.tail = basis.tail
        self.n, self.d = X.shape
        self.F, self.M = train.shape[1], Y.shape[1]
        self.to_numpy = lambda a: np.asarray(a.cpu()) if device is not None else np.asarray(a)
        self.dtype = xp.float32

    def group(self, values: Any) -> Any:
        """Per-problem totals of per-column values (F, M): columns of a softmax problem add up."""
        return self.xp.sum(values, axis=-1, keepdims=True) if self.multinomial else values

    def dot(self, a: Any, b: Any) -> Any:
        """Per-problem inner products of two parameter arrays (d+1, F, M)."""
        return self.group(self.xp.sum(a * b, axis=0))

    def initial(self) -> Any:
        """Zero weights; intercepts at the training log-odds (a free warm start)."""
        xp = self.xp
        share = xp.sum(self.Y[:, None, :] * self.mask, axis=0, dtype=xp.float64) / self.n_train
        share = xp.clip(share, 1e-6, 1 - 1e-6)
        intercept = xp.log(share) if self.multinomial else xp.log(share) - xp.log1p(-share)
        params = xp.zeros((self.d + 1, self.F, self.M), dtype=xp.float64, device=array_api_compat.device(self.Y))
        params[self.d] = intercept
        return params

    def logits(self, params: Any) -> Any:
        """Decision values of every row under every split's model, shape (n, F, M)."""
        xp = self.xp
        coef = params[: self.d] / self.scale
        offset = params[self.d] - xp.sum(self.mean * coef, axis=0)
        flat = xp.reshape(xp.astype(coef, self.dtype), (self.d, self.F * self.M))
        return xp.reshape(self.X @ flat + xp.astype(xp.reshape(offset, (1, -1)), self.dtype), (self.n, self.F, self.M))

    def probabilities(self, z: Any) -> Any:
        """Sigmoid or softmax of decision values."""
        xp = self.xp
        if self.multinomial:
            e = xp.exp(z - xp.max(z, axis=-1, keepdims=True))
            return e / xp.sum(e, axis=-1, keepdims=True)
        e = xp.exp(-xp.abs(z))
        return xp.where(z >= 0, 1 / (1 + e), e / (1 + e))

    def loss(self, params: Any, z: Any) -> tuple[Any, Any]:
        """Objective per problem (F, M or 1) and masked residuals p - y, shape (n, F, M)."""
        xp = self.xp
        y = self.Y[:, None, :]
        if self.multinomial:
            top = xp.max(z, axis=-1, keepdims=True)
            e = xp.exp(z - top)
            total = xp.sum(e, axis=-1, keepdims=True)
            pointwise = top + xp.log(total) - xp.sum(y * z, axis=-1, keepdims=True)
            residual = (e / total - y) * self.mask
        else:
            e = xp.exp(-xp.abs(z))
            pointwise = xp.where(z > 0, z, 0.0) - y * z + xp.log1p(e)
            residual = (xp.where(z >= 0, 1 / (1 + e), e / (1 + e)) - y) * self.mask
        data = xp.sum(pointwise * self.mask, axis=0, dtype=xp.float64) / self.n_train
        penalty = self.group(xp.sum(params[: self.d] ** 2, axis=0)) / (2 * self.C * self.n_train)
        return data + penalty, residual

    def gradient(self, params: Any, residual: Any) -> Any:
        """Gradient of the objective, shape (d+1, F, M)."""
        xp = self.xp
        raw = xp.astype(xp.reshape(self.X.T @ xp.reshape(residual, (self.n, -1)), (self.d, self.F, self.M)),
                        xp.float64)
        total = xp.sum(residual, axis=0, dtype=xp.float64)
        weights = (raw - self.mean * total) / self.scale / self.n_train + params[: self.d] / (self.C * self.n_train)
        return xp.concat([weights, (total / self.n_train)[None]], axis=0)

    def precondition(self, grad: Any) -> Any:
        """Apply the inverse of the Böhning bound ``c X'X / n + I / (C n)``, X'X / n taken from the basis."""
        xp = self.xp
        ridge = 1 / (self.C * self.n_train[:, 0])  # (F,)
        tail = 1 / (self.curvature * self.tail + ridge)  # (F,)
        flat = xp.astype(xp.reshape(grad[: self.d], (self.d, -1)), self.dtype)  # float32 suffices to precondition
        project = xp.reshape(xp.astype(self.V.T @ flat, xp.float64), (-1, self.F, self.M))
        shrink = (1 / (self.curvature * self.values + ridge) - tail)[:, :, None] * project  # (r, F, M)
        back = self.V @ xp.astype(xp.reshape(shrink, (shrink.shape[0], -1)), self.dtype)
        weights = tail[:, None] * grad[: self.d] + xp.reshape(xp.astype(back, xp.float64), (self.d, self.F, self.M))
        return xp.concat([weights, grad[self.d:] / self.curvature], axis=0)

    def minimise(self, *, tol: float, max_iter: int, memory: int) -> tuple[Any, Any, Any]:
        """Lockstep L-BFGS with per-problem histories, Armijo backtracking and gradient stopping."""
        xp = self.xp
        params = self.initial()
        value, residual = self.loss(params, self.logits(params))
        grad = self.gradient(params, residual)
        shape = value.shape
        n_iter = xp.zeros(shape, dtype=xp.int64, device=array_api_compat.device(params))
        converged = self.group(xp.max(xp.abs(grad), axis=0)) <= tol
        done = converged
        stalled = xp.zeros(shape, dtype=xp.bool, device=array_api_compat.device(params))
        steps: list[tuple[Any, Any, Any]] = []
        gamma = xp.ones(shape, dtype=xp.float64, device=array_api_compat.device(params))
        for _ in range(max_iter):
            if bool(xp.all(done)):
                break
            direction = -self._two_loop(grad, steps, gamma)
            slope = self.dot(grad, direction)
            uphill = slope >= 0
            if bool(xp.any(uphill)):
                direction = xp.where(uphill, -self.precondition(grad), direction)
                slope = self.dot(grad, direction)
            direction = xp.where(done, 0.0, direction)
            step = xp.where(done, 0.0, 1.0)
            for _ in range(_MAX_BACKTRACK):
                candidate = params + step * direction
                new_value, residual = self.loss(candidate, self.logits(candidate))
                ok = done | (new_value <= value + _ARMIJO * step * slope)
                if bool(xp.all(ok)):
                    break
                step = xp.where(ok, step, step * 0.5)
            else:
                stalled = stalled | ~ok
                step = xp.where(ok, step, 0.0)
                candidate = params + step * direction
                new_value, residual = self.loss(candidate, self.logits(candidate))
            new_grad = self.gradient(candidate, residual)
            s, y = candidate - params, new_grad - grad
            sy = self.dot(s, y)
            useful = sy > 1e-12 * xp.sqrt(self.dot(s, s) * self.dot(y, y))
            rho = xp.where(useful, 1 / xp.where(useful, sy, 1.0), 0.0)
            gamma = xp.where(useful, sy / xp.where(useful, self.dot(y, self.precondition(y)), 1.0), gamma)
            steps = [*steps, (s, y, rho)][-memory:]
            n_iter = n_iter + xp.astype(~done, xp.int64)
            params, value, grad = candidate, xp.where(done, value, new_value), new_grad
            converged = self.group(xp.max(xp.abs(grad), axis=0)) <= tol
            done = done | stalled | converged
        return params, n_iter, converged

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


def fit_ridge(X: np.ndarray, y: np.ndarray, folds: np.ndarray, *, alpha: float) -> np.ndarray:
    """Ridge regression on standardised features per split; return held-out predictions.

    Matches scikit-learn's `Ridge(alpha)` after a `StandardScaler` fitted on the training rows, solved in
    closed form in float64.

    Args:
        X: shape (n_rows, n_features).
        y: shape (n_rows,), float targets.
        folds: shape (n_rows,), held-out split per row; -1 = always trained on.
        alpha: L2 strength.

    Returns:
        shape (n_rows,), held-out predictions (NaN for rows never held out).
    """
    X = np.asarray(X, dtype=np.float64)
    X = X - X.mean(axis=0)
    y = np.asarray(y, dtype=np.float64)
    folds = np.asarray(folds)
    train = fold_masks(folds)
    mean, scale = fold_stats(X, train)
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
        lhs = cov / np.outer(scale[k], scale[k]) + alpha * np.eye(X.shape[1])
        coef = np.linalg.solve(lhs, xy / scale[k])
        predictions[test] = ((held_out - mean[k]) / scale[k]) @ coef + y_mean
    return predictions
