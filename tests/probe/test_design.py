"""Pair features through the tables: the same products, statistics and fits as the dense pair matrix."""

import numpy as np
import pytest
import scipy.sparse

import genebench.probe.solvers as solvers
from genebench.probe.design import PairDesign
from genebench.probe.solvers import fit_logistic, fit_ridge, fold_stats


@pytest.fixture(scope="module")
def pairs():
    rng = np.random.default_rng(7)
    genes = (rng.normal(size=(60, 6)) * rng.uniform(0.5, 3, 6) + 1).astype(np.float32)
    partners = rng.normal(size=(15, 6)).astype(np.float32)
    # genes 40-59 only ever come second: a design keeps just the table rows its pairs use
    a, b, c = rng.integers(0, 40, 900), rng.integers(0, 60, 900), rng.integers(0, 15, 900)
    return genes, partners, a, b, c, rng


def _designs(pairs):
    genes, partners, a, b, c, _ = pairs
    counts = np.where(genes > 3, genes, 0).astype(np.float32)  # mostly zeros, as word counts are
    sparse = scipy.sparse.csr_array(counts)
    return {
        "mean, one table": (PairDesign((genes, genes), (a, b), "mean"), (genes[a] + genes[b]) * np.float32(0.5)),
        "mean, two tables": (PairDesign((genes, partners), (a, c), "mean"), (genes[a] + partners[c]) * np.float32(0.5)),
        "concat": (PairDesign((genes, partners), (a, c), "concat"), np.hstack([genes[a], partners[c]])),
        "mean, one sparse table": (PairDesign((sparse, sparse), (a, b), "mean"),
                                   (counts[a] + counts[b]) * np.float32(0.5)),
        "concat, a sparse table": (PairDesign((sparse, partners), (a, c), "concat"),
                                   np.hstack([counts[a], partners[c]])),
    }


@pytest.mark.parametrize("case", ["mean, one table", "mean, two tables", "concat", "mean, one sparse table",
                                  "concat, a sparse table"])
def test_products_rows_and_dense_form_match_the_pair_matrix(pairs, case):
    X, dense = _designs(pairs)[case]
    rng = pairs[-1]
    W, R = rng.normal(size=(X.shape[1], 4)).astype(np.float32), rng.normal(size=(900, 4)).astype(np.float32)
    assert X.shape == dense.shape
    np.testing.assert_allclose(X @ W, dense @ W, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(X.T @ R, dense.T @ R, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(X[10:20], dense[10:20])
    np.testing.assert_array_equal(X[np.array([5, 0, 5])], dense[[5, 0, 5]])
    np.testing.assert_array_equal(np.asarray(X), dense)
    np.testing.assert_array_equal(np.asarray(X.take(np.array([7, 3]))), dense[[7, 3]])


def test_mean_needs_one_width(pairs):
    genes, _, a, b, _, _ = pairs
    with pytest.raises(ValueError, match="'mean' needs tables of one width, found 6 and 3; use mode='concat'"):
        PairDesign((genes, genes[:, :3]), (a, b), "mean")


@pytest.mark.parametrize("scale", ["none", "standard"])
@pytest.mark.parametrize("case", ["mean, one table", "concat", "mean, one sparse table"])
def test_fold_statistics_through_the_tables_equal_the_dense_ones(pairs, case, scale, monkeypatch):
    monkeypatch.setattr(solvers, "_BLOCK_ROWS", 128)  # several blocks, the last one short
    X, dense = _designs(pairs)[case]
    train = solvers.fold_masks(np.arange(900) % 5)
    for design_stat, dense_stat in zip(fold_stats(X, train, scale=scale), fold_stats(dense, train, scale=scale)):
        np.testing.assert_allclose(design_stat, dense_stat, rtol=1e-5)


@pytest.mark.parametrize("case", ["mean, one table", "concat", "concat, a sparse table"])
def test_fits_through_the_tables_equal_dense_fits(pairs, case):
    X, dense = _designs(pairs)[case]
    genes, _, a, b, _, _ = pairs
    noise = np.random.default_rng(8).normal(size=900)  # not separable, so the optimum is finite
    y = ((genes[a, 0] + genes[b, 1] + noise) > 2).astype(np.uint8)[:, None]
    folds = np.arange(900) % 5
    through, direct = (fit_logistic(m, y, folds, multinomial=False, C=1.0, tol=1e-5, max_iter=1000)
                       for m in (X, dense))
    np.testing.assert_allclose(through.proba, direct.proba, atol=1e-4)  # float32 products, summed in another order
    assert through.converged.all()
    np.testing.assert_allclose(fit_ridge(X, y[:, 0] * 1.0, folds, alpha=1.0),
                               fit_ridge(dense, y[:, 0] * 1.0, folds, alpha=1.0), atol=1e-6)
