"""The batched solvers against scikit-learn's pipeline at the same C, preprocessing and folds."""

import warnings

import numpy as np
import pytest
import scipy.sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from genebench.metrics import roc_auc
from genebench.probe.solvers import Basis, fit_logistic, fit_ridge, fold_stats


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = (rng.normal(size=(500, 30)) * rng.uniform(0.1, 10, 30) + 3).astype(np.float32)
    X[:, 4] = 2.0  # a constant column
    folds = rng.integers(0, 3, 500)
    folds[:40] = -1  # always trained on
    Y = np.stack([(X[:, :3].sum(1) + rng.normal(size=500) * 4 > 9), X[:, 5] > np.median(X[:, 5])], axis=1)
    classes = np.digitize(X[:, 6] + rng.normal(size=500) * X[:, 6].std(), np.quantile(X[:, 6], [0.3, 0.7]))
    return X, Y.astype(np.uint8), classes, folds


def _sklearn_proba(X, y, folds, k, C=0.5, scale="none"):
    train, test = folds != k, folds == k
    model = LogisticRegression(C=C, tol=1e-10, max_iter=100_000, solver="newton-cholesky")  # the exact optimum
    model = make_pipeline(StandardScaler(), model) if scale == "standard" else model
    with warnings.catch_warnings():  # expected: at tol 1e-10 its line search hands over to lbfgs on sparse counts
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        model.fit(X[train], y[train])
    return model.predict_proba(X[test])


@pytest.mark.parametrize("scale", ["none", "standard"])
def test_binary_columns_match_sklearn(data, scale):
    X, Y, _, folds = data
    fit = fit_logistic(X, Y, folds, multinomial=False, C=0.5, tol=1e-7, max_iter=2000, scale=scale)
    for column in range(Y.shape[1]):
        for k in range(3):
            expected = _sklearn_proba(X, Y[:, column], folds, k, scale=scale)[:, 1]
            np.testing.assert_allclose(fit.proba[folds == k, column], expected, atol=2e-3)
    assert np.isnan(fit.proba[:40]).all()
    assert fit.n_iter.shape == (3, 2)


@pytest.mark.parametrize("scale", ["none", "standard"])
def test_multinomial_matches_sklearn(data, scale):
    X, _, classes, folds = data
    fit = fit_logistic(X, classes, folds, multinomial=True, C=0.5, tol=1e-7, max_iter=2000, scale=scale)
    assert fit.n_iter.shape == (3, 1)
    for k in range(3):
        np.testing.assert_allclose(fit.proba[folds == k], _sklearn_proba(X, classes, folds, k, scale=scale),
                                   atol=2e-3)
    np.testing.assert_allclose(fit.proba[folds >= 0].sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("scale", ["none", "standard"])
def test_sparse_word_counts_reach_sklearns_optimum(scale):
    rng = np.random.default_rng(5)
    counts = rng.poisson(0.03, size=(600, 80)).astype(np.float32)  # word counts: about 3% non-zero
    y = (counts[:, :4].sum(axis=1) + rng.normal(size=600) * 0.5 > 0.5).astype(np.uint8)
    classes = np.minimum(counts[:, 4:10].argmax(axis=1) % 3 + (counts[:, 4:10].sum(axis=1) > 0), 2)
    folds = np.arange(600) % 3
    sparse = scipy.sparse.csr_array(counts)
    binary = fit_logistic(sparse, y[:, None], folds, multinomial=False, C=0.5, tol=1e-7, max_iter=2000, scale=scale)
    softmax = fit_logistic(sparse, classes, folds, multinomial=True, C=0.5, tol=1e-7, max_iter=2000, scale=scale)
    for k in range(3):
        np.testing.assert_allclose(binary.proba[folds == k, 0], _sklearn_proba(counts, y, folds, k, scale=scale)[:, 1],
                                   atol=2e-3)
        np.testing.assert_allclose(softmax.proba[folds == k], _sklearn_proba(counts, classes, folds, k, scale=scale),
                                   atol=2e-3)


def test_default_tolerance_converges_and_repeats_bit_for_bit(data):
    X, Y, _, folds = data
    first = fit_logistic(X, Y, folds, multinomial=False, C=1.0, tol=1e-4, max_iter=5000)
    second = fit_logistic(X, Y, folds, multinomial=False, C=1.0, tol=1e-4, max_iter=5000)
    assert first.converged.all()
    assert np.array_equal(first.proba, second.proba, equal_nan=True)


def test_torch_path_agrees_with_numpy(data):
    pytest.importorskip("torch")
    X, Y, _, folds = data
    numpy_fit = fit_logistic(X, Y, folds, multinomial=False, C=1.0, tol=1e-6, max_iter=2000)
    torch_fit = fit_logistic(X, Y, folds, multinomial=False, C=1.0, tol=1e-6, max_iter=2000, device="cpu")
    np.testing.assert_allclose(torch_fit.proba[40:], numpy_fit.proba[40:], atol=1e-3)


def test_iteration_cap_is_reported(data):
    X, Y, _, folds = data
    fit = fit_logistic(X, Y, folds, multinomial=False, C=1.0, tol=1e-12, max_iter=2)
    assert fit.n_iter.max() == 2
    assert not fit.converged.all()


@pytest.mark.parametrize("scale", ["none", "standard"])
def test_ridge_matches_sklearn(scale):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 12)) * rng.uniform(0.5, 5, 12) + 1
    y = X[:, :2].sum(1) + rng.normal(size=200)
    folds = np.arange(200) % 4
    predictions = fit_ridge(X, y, folds, alpha=3.0, scale=scale)
    for k in range(4):
        train, test = folds != k, folds == k
        model = make_pipeline(StandardScaler(), Ridge(alpha=3.0)) if scale == "standard" else Ridge(alpha=3.0)
        model.fit(X[train], y[train])
        np.testing.assert_allclose(predictions[test], model.predict(X[test]), atol=1e-9)


def test_fold_stats_give_constant_columns_unit_scale():
    X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0], [4.0, 5.0]])
    train = np.array([[True], [True], [True], [False]])
    mean, scale = fold_stats(X, train, scale="standard")
    np.testing.assert_allclose(mean, [[2.0, 5.0]])
    np.testing.assert_allclose(scale, [[np.sqrt(2 / 3), 1.0]])
    np.testing.assert_allclose(fold_stats(X, train, scale="none")[1], [[1.0, 1.0]])


def test_basis_keeps_the_trace_and_concatenates():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 10)) @ rng.normal(size=(10, 10))
    basis = Basis.from_features(X, scale="standard", rank=4)  # a correlation matrix: trace = n_features
    assert basis.vectors.shape == (10, 4)
    assert basis.values.sum() + 6 * basis.tail == pytest.approx(10.0)
    both = basis.concat(basis)
    assert both.vectors.shape == (20, 8)
    assert both.tail == pytest.approx(basis.tail)


def test_held_out_rows_never_leak_into_a_fold_fit():
    """Random features cannot rank held-out rows: no fold's fit may start from, or see, its held-out rows."""
    rng = np.random.default_rng(5)  # "Pathways;Digestion and absorption" with random 384-d vectors: 25 positives
    X = rng.normal(size=(11365, 384)).astype(np.float32)
    y = np.zeros((11365, 1), dtype=np.uint8)
    y[rng.choice(11365, 25, replace=False)] = 1
    folds = np.arange(11365) % 5
    fit = fit_logistic(X, y, folds, multinomial=False, C=1.0, tol=1e-4, max_iter=5000)
    aucs = [roc_auc(y[folds == k, 0], fit.proba[folds == k, 0], task_type="binary") for k in range(5)]
    assert np.mean(aucs) < 0.7  # a fit started from the all-rows fit scored 1.0 here
