"""The feature matrices the solvers take: dense arrays, sparse matrices, and pair designs.

A gene-pair task has up to ~10^6 rows built from a table of ~2 x 10^4 genes; its feature matrix would take
gigabytes for large embeddings, and every solver step would stream it from memory. `PairDesign` multiplies
through the tables instead: ``X @ W`` is a small table product gathered by row, and ``X.T @ R`` sums ``R``'s
rows per table row with a sparse selection matrix first. Mostly-zero tables (word counts, indicators) stay
sparse, on their own or inside a `PairDesign`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import scipy.sparse
from scipy.sparse.linalg import LinearOperator


def dense(X: Any) -> np.ndarray:
    """`X` (an array, a `PairDesign`, a sparse matrix or rows of one) as a dense array."""
    return X.toarray() if scipy.sparse.issparse(X) else np.asarray(X)


def as_float32(X: Any) -> np.ndarray | scipy.sparse.csr_array:
    """A dense matrix as a contiguous float32 array, a sparse one as a float32 CSR matrix."""
    return scipy.sparse.csr_array(X, dtype=np.float32) if scipy.sparse.issparse(X) else \
        np.ascontiguousarray(X, dtype=np.float32)


class PairDesign(LinearOperator):
    """Rows ``[A[a_i] | B[b_i]]`` ("concat") or ``(A[a_i] + B[b_i]) / 2`` ("mean"), as a linear operator.

    Supports ``X @ W``, ``X.T @ R``, ``X.shape``, dense row blocks ``X[rows]``, a design of some of the pairs
    (``X.take(rows)``) and ``np.asarray(X)``.

    Args:
        tables: the two embedding tables (the same array for gene-gene pairs), dense or sparse.
        rows: the table row of each pair's first and second member.
        mode: "concat" or "mean" (the tables must then have one width).

    Examples:
        >>> table = np.array([[1.0, 0.0], [0.0, 2.0]], dtype=np.float32)
        >>> X = PairDesign((table, table), (np.array([0, 1]), np.array([1, 1])), "mean")
        >>> X[:].tolist(), (X @ np.ones((2, 1), np.float32)).ravel().tolist()
        ([[0.5, 1.0], [0.0, 2.0]], [1.5, 2.0])
    """

    def __init__(self, tables: tuple[np.ndarray, np.ndarray], rows: tuple[np.ndarray, np.ndarray],
                 mode: Literal["concat", "mean"]) -> None:
        first = as_float32(tables[0])
        second = first if tables[1] is tables[0] else as_float32(tables[1])
        if mode == "mean" and first.shape[1] != second.shape[1]:
            raise ValueError(f"PairDesign: 'mean' needs tables of one width, found {first.shape[1]} and "
                             f"{second.shape[1]}; use mode='concat'.")
        n = len(rows[0])
        # keep only the table rows some pair uses: products then cost what the pairs need, not the whole table
        self._one_table = mode == "mean" and first is second
        if self._one_table:
            used, inverse = np.unique(np.concatenate([rows[0], rows[1]]), return_inverse=True)
            first = second = first[used]
            rows = (inverse[:n], inverse[n:])
        else:
            (used, first_rows), (used_second, second_rows) = (np.unique(r, return_inverse=True) for r in rows)
            first, second, rows = first[used], second[used_second], (first_rows, second_rows)
        self.tables, self.rows, self.mode = (first, second), rows, mode
        width = first.shape[1] + second.shape[1] if mode == "concat" else first.shape[1]
        super().__init__(dtype=np.dtype(np.float32), shape=(n, width))
        # selections[j] @ R sums R's rows into the table rows they were gathered from
        self._selections = [scipy.sparse.csr_array((np.ones(n, np.float32), (r, np.arange(n))), shape=(t.shape[0], n))
                            for t, r in zip(self.tables, self.rows)]
        if self._one_table:
            self._selections = [self._selections[0] + self._selections[1]]

    def take(self, rows: Any) -> PairDesign:
        """The design of the pairs at `rows` (an index array or slice), over the same tables."""
        return PairDesign(self.tables, (self.rows[0][rows], self.rows[1][rows]), self.mode)

    def _products(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each table times its block of `W`."""
        first, second = self.tables
        if self.mode == "concat":
            return first @ W[: first.shape[1]], second @ W[first.shape[1]:]
        product = first @ W
        return product, product if self._one_table else second @ W

    def _matmat(self, W: np.ndarray) -> np.ndarray:
        first, second = self._products(np.asarray(W, dtype=np.float32))
        out = first[self.rows[0]]
        out += second[self.rows[1]]
        if self.mode == "mean":
            out *= np.float32(0.5)
        return out

    def _rmatmat(self, R: np.ndarray) -> np.ndarray:
        R = np.asarray(R, dtype=np.float32)
        first, second = self.tables
        if self._one_table:
            return (first.T @ (self._selections[0] @ R)) * np.float32(0.5)
        select_first, select_second = self._selections
        if self.mode == "concat":
            return np.vstack([first.T @ (select_first @ R), second.T @ (select_second @ R)])
        return (first.T @ (select_first @ R) + second.T @ (select_second @ R)) * np.float32(0.5)

    def __getitem__(self, rows: Any) -> np.ndarray:
        """Dense feature rows: a slice or an index array of pairs."""
        (a, b) = (self.rows[0][rows], self.rows[1][rows])
        first, second = dense(self.tables[0][a]), dense(self.tables[1][b])
        if self.mode == "concat":
            return np.hstack([first, second])
        first += second
        first *= np.float32(0.5)
        return first

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        rows = self[:]
        return rows if dtype is None else rows.astype(dtype, copy=False)


Features = np.ndarray | PairDesign | scipy.sparse.csr_array
"""What the solvers take as features: a dense matrix, a `PairDesign`, or a sparse matrix (numpy path)."""
