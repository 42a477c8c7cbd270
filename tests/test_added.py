"""Added over names (`genebench.controls.added`): the stacked AUC, its cross-fitting and its gene bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.metrics import roc_auc_score

from genebench.controls.added import (
    _TABLES,
    _stacked,
    added_over_names,
    auc_with_influence,
    bootstrap_shifts,
    gene_weights,
    mean_with_ci,
)
from genebench.metrics import roc_auc
from genebench.tasks.metadata import TaskMetadata
from genebench.tasks.task import Task

N = 1500


def _meta(kind: str, labels: tuple[str, ...] = ()) -> TaskMetadata:
    return TaskMetadata(name=f"synthetic {kind}", category="localization", type=kind, family="synthetic",
                        label_names=labels, source_url="u", source_version="1", license="l", citation="c")


def _binary(seed: int = 0) -> tuple[Task, np.ndarray, np.ndarray]:
    """A binary task whose name logits see half the signal, and an independent second half the model can add."""
    rng = np.random.default_rng(seed)
    y = (rng.random(N) < 0.3).astype(np.int64)
    genes = np.array([f"GENE{i}" for i in range(N)])
    task = Task(_meta("binary", ("no", "yes")), genes, y, rng.integers(0, 5, N))
    names = 1.2 * y - 0.6 + rng.normal(0, 1, N)
    extra = 1.2 * y - 0.6 + rng.normal(0, 1, N)
    return task, names, extra


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def test_a_model_with_its_own_signal_adds_and_a_names_only_model_does_not():
    task, names, extra = _binary()
    rows = np.arange(N)
    adds = added_over_names(task, rows, _sigmoid(extra), names)
    echo = added_over_names(task, rows, _sigmoid(names + np.random.default_rng(1).normal(0, 0.05, N)), names)
    noise = added_over_names(task, rows, np.random.default_rng(2).random(N), names)
    assert adds.value > 0.05 and adds.low > 0.02
    assert abs(echo.value) < 0.005
    assert -0.01 < noise.value <= 0.002
    assert adds.low <= adds.value <= adds.high and len(adds.draws) == 200
    assert adds.names == pytest.approx(np.mean([roc_auc_score(task.labels[task.folds == k], names[task.folds == k])
                                                for k in range(5)]), abs=1e-6)


def test_each_fold_slope_is_the_fit_without_that_fold():
    task, names, extra = _binary(3)
    x = np.log(_sigmoid(extra) / (1 - _sigmoid(extra)))
    y = task.labels.astype(float)
    stacked = _stacked(y[:, None].astype(bool), names[:, None], x[:, None], task.folds)[:, 0]
    for k in range(5):
        train, test = task.folds != k, task.folds == k

        def loss(theta: np.ndarray, train: np.ndarray = train) -> float:
            eta = names[train] + theta[0] + theta[1] * x[train]
            return float(np.sum(np.logaddexp(0, eta) - y[train] * eta) + 0.5 * theta[1] ** 2)

        slope = minimize(loss, np.zeros(2), method="BFGS", options={"gtol": 1e-8}).x[1]
        fitted = (stacked[test] - names[test]) / x[test]
        assert fitted == pytest.approx(np.full(test.sum(), slope), abs=2e-3)


def test_bootstrap_draws_follow_the_exact_weighted_auc():
    task, names, extra = _binary(4)
    result = added_over_names(task, np.arange(N), _sigmoid(extra), names)
    x = np.log(_sigmoid(extra) / (1 - _sigmoid(extra)))
    stacked = _stacked(task.labels[:, None].astype(bool), names[:, None], x[:, None], task.folds)[:, 0]
    weights = gene_weights(task.entities, 200, 0)

    def weighted(scores: np.ndarray, w: np.ndarray) -> float:
        return np.mean([roc_auc_score(task.labels[task.folds == k], scores[task.folds == k],
                                      sample_weight=w[task.folds == k]) for k in range(5)])

    exact = np.array([weighted(stacked, w) - weighted(names, w) for w in weights])
    draws = np.array(result.draws)
    assert np.corrcoef(exact, draws)[0, 1] > 0.95
    assert np.quantile(draws, [0.025, 0.975]) == pytest.approx(np.quantile(exact, [0.025, 0.975]), abs=0.004)


def test_gene_weights_are_poisson_and_a_function_of_the_gene_alone():
    genes = np.array([f"G{i}" for i in range(4000)])
    weights = gene_weights(genes, 200, 0)
    again = gene_weights(genes[::-1], 200, 0)[:, ::-1]
    assert np.array_equal(weights, again)
    assert weights.mean() == pytest.approx(1.0, abs=0.01) and weights.var() == pytest.approx(1.0, abs=0.02)
    assert not np.array_equal(weights, gene_weights(genes, 200, 1))
    assert np.corrcoef(weights[:, 0], weights[:, 1])[0, 1] == pytest.approx(0.0, abs=0.2)


def test_bootstrap_shifts_are_the_same_bits_whatever_genes_the_table_held_before():
    """The weight table grows with each task a process finishes, on whichever thread gets there first; a task's
    draws must not depend on that history, or two runs of the same model differ in added over names' last digit."""
    rng = np.random.default_rng(7)
    genes = np.array([f"GENE{i}" for i in rng.permutation(3000)]).repeat(2)
    influence = rng.normal(0, 1e-3, len(genes))
    fresh = bootstrap_shifts(genes, influence, 200, 23)
    _TABLES.pop((200, 23))  # a new process: the same genes reach the table after others, in another order
    gene_weights(np.array([f"OTHER{i}" for i in range(777)]), 200, 23)
    gene_weights(genes[::-1], 200, 23)
    assert np.array_equal(bootstrap_shifts(genes, influence, 200, 23), fresh)
    exact = gene_weights(genes, 200, 23) @ influence
    assert np.abs(fresh - exact).max() <= 1e-9 * np.abs(influence).sum()


@pytest.mark.parametrize("kind", ["multi-label", "categorical"])
def test_columns_are_weighted_by_positives_like_the_main_score(kind):
    rng = np.random.default_rng(5)
    n, columns = 900, 4
    if kind == "multi-label":
        labels = (rng.random((n, columns)) < [0.1, 0.2, 0.3, 0.4]).astype(np.uint8)
        truth = labels.astype(float)
    else:
        labels = rng.choice(columns, size=n, p=[0.1, 0.2, 0.3, 0.4])
        truth = (labels[:, None] == np.arange(columns)).astype(float)
    folds = rng.integers(0, 5, n)
    task = Task(_meta(kind, tuple("abcd")), np.array([f"G{i}" for i in range(n)]), labels, folds)
    names = (truth + rng.normal(0, 1, (n, columns))).astype(np.float16).astype(np.float32)  # stored as float16: ties
    if kind == "categorical":
        names = names - np.log(np.exp(names).sum(axis=1, keepdims=True))  # log-probabilities
    expected = np.mean([roc_auc(labels[folds == k], names[folds == k], task_type=kind) for k in range(5)])
    model = _sigmoid(truth + rng.normal(0, 1, (n, columns)))
    result = added_over_names(task, np.arange(n), model / model.sum(axis=1, keepdims=True)
                              if kind == "categorical" else model, names)
    assert result.names == pytest.approx(expected, abs=1e-6)
    assert result.value > 0.02 and result.low > 0


def test_influence_sums_to_zero_per_fold():
    task, names, _ = _binary(6)
    auc, psi = auc_with_influence(task.labels[:, None], names[:, None], task.folds)
    assert 0.7 < auc < 0.9
    assert [abs(psi[task.folds == k].sum()) < 1e-9 for k in range(5)] == [True] * 5


def test_covered_rows_and_rows_the_name_control_could_not_score():
    task, names, extra = _binary(7)
    rows = np.arange(0, N, 2)
    names = names.copy()
    names[:10] = np.nan
    result = added_over_names(task, rows, _sigmoid(extra[rows]), names)
    assert result.n_rows == len(rows) - 5


def test_tasks_without_an_auc_or_out_of_fold_training_scores_are_skipped_with_a_reason():
    task, names, extra = _binary(8)
    regression = Task(_meta("regression"), task.entities, names, task.folds)
    train_test = Task(task.metadata, task.entities, task.labels, np.where(task.folds == 0, 0, -1))
    assert "regression" in added_over_names(regression, np.arange(N), extra, names).skipped
    assert "train-test" in added_over_names(train_test, np.arange(N), _sigmoid(extra), names).skipped


def test_mean_over_tasks_pairs_draws_and_counts_a_group_once():
    records = []
    for seed in (10, 11):
        task, names, extra = _binary(seed)
        records.append(added_over_names(task, np.arange(N), _sigmoid(extra), names))
    values, draws = np.array([r.value for r in records]), np.array([r.draws for r in records])
    mean, low, high = mean_with_ci(values, draws)
    assert mean == pytest.approx(values.mean())
    assert low < mean < high and high - low < max(r.high - r.low for r in records)  # one gene set: paired draws
    groups = np.array(["a", "b", "b", "b"])
    tripled = mean_with_ci(np.r_[values, values[1], values[1]], np.r_[draws, draws[1:], draws[1:]], groups)
    assert tripled == pytest.approx((mean, low, high))
    assert np.isnan(mean_with_ci(np.array([]), np.empty((0, 200)))[0])
