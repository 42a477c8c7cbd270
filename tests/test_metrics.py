"""Metrics against scikit-learn and hand-computed values."""

import sys

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    mean_squared_error,
    precision_score,
    r2_score,
    recall_score,
    roc_auc_score,
)

from genebench import metrics
from genebench.errors import MissingDependencyError


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(0)


def test_binary_auc_matches_sklearn_with_ties(rng):
    y = rng.integers(0, 2, 200)
    score = np.round(rng.random(200) + 0.3 * y, 1)  # many ties
    assert metrics.roc_auc(y, score, task_type="binary") == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    assert metrics.roc_auc(y, np.stack([1 - score, score], 1), task_type="derived binary") == pytest.approx(
        roc_auc_score(y, score), abs=1e-12)


def test_categorical_auc_is_ovr_weighted(rng):
    y = rng.integers(0, 4, 300)
    proba = rng.dirichlet(np.ones(4), 300) + np.eye(4)[y] * 0.3
    proba /= proba.sum(1, keepdims=True)
    expected = roc_auc_score(y, proba, multi_class="ovr", average="weighted")
    assert metrics.roc_auc(y, proba, task_type="categorical") == pytest.approx(expected, abs=1e-12)


def test_categorical_auc_skips_absent_classes(rng):
    y = rng.integers(0, 3, 100)
    proba = rng.dirichlet(np.ones(4), 100)
    per_class = [roc_auc_score(y == c, proba[:, c]) for c in range(3)]
    weights = np.bincount(y, minlength=3)
    auc = metrics.roc_auc(y, proba, task_type="categorical")
    assert auc == pytest.approx(np.average(per_class, weights=weights), abs=1e-12)
    shuffled = proba.copy()
    shuffled[:, 3] = rng.permutation(shuffled[:, 3])  # class 3 has no row: its column cannot matter
    assert metrics.roc_auc(y, shuffled, task_type="categorical") == auc


def test_multilabel_auc_is_weighted_and_from_probabilities(rng):
    y = (rng.random((250, 5)) < [0.1, 0.2, 0.3, 0.4, 0.5]).astype(int)
    proba = np.clip(rng.random((250, 5)) * 0.7 + 0.3 * y, 0, 1)
    expected = roc_auc_score(y, proba, average="weighted")
    assert metrics.roc_auc(y, proba, task_type="multi-label") == pytest.approx(expected, abs=1e-12)
    hard = metrics.roc_auc(y, (proba >= 0.5).astype(float), task_type="multi-label")
    assert hard != pytest.approx(expected)  # the reference's hard-label AUC is a different (wrong) number


def test_multilabel_auc_skips_one_class_labels():
    y = np.array([[1, 0, 1], [0, 0, 1], [1, 0, 1], [0, 0, 1]])
    proba = np.array([[0.9, 0.1, 0.2], [0.2, 0.3, 0.4], [0.6, 0.2, 0.6], [0.4, 0.5, 0.8]])
    assert metrics.roc_auc(y, proba, task_type="multi-label") == 1.0
    assert np.isnan(metrics.roc_auc(y[:, 1:], proba[:, 1:], task_type="multi-label"))


def test_auc_per_gene_by_hand():
    y = np.array([1, 0, 1, 0, 1, 1, 0, 0])
    score = np.array([0.9, 0.1, 0.2, 0.8, 0.5, 0.4, 0.3, 0.35])
    genes = np.array(["A", "A", "B", "B", "C", "C", "D", "D"])  # A: 1.0, B: 0.0, C and D one-class: skipped
    assert metrics.auc_per_gene(y, score, genes) == 0.5


def test_auc_per_gene_matches_sklearn_per_gene_with_ties(rng):
    genes = rng.choice([f"G{i}" for i in range(40)], 3000)
    y = rng.integers(0, 2, 3000)
    y[genes == "G7"] = 1  # a one-class gene is skipped
    score = np.round(rng.random(3000), 2)  # many ties
    expected = [roc_auc_score(y[genes == g], score[genes == g]) for g in sorted(set(genes)) if g != "G7"]
    assert metrics.auc_per_gene(y, score, genes) == pytest.approx(np.mean(expected), abs=1e-12)


@pytest.mark.parametrize("shape", ["binary", "categorical", "multi-label", "one column", "no positives"])
def test_label_scores_match_sklearn(rng, shape):
    size = {"binary": (120,), "categorical": (120,), "multi-label": (120, 5), "one column": (120, 1),
            "no positives": (120, 4)}[shape]
    y = rng.integers(0, 3 if shape == "categorical" else 2, size) * (shape != "no positives")
    pred = np.where(rng.random(size) < 0.6, y, rng.integers(0, 3 if shape == "categorical" else 2, size))
    scores = metrics.label_scores(y, pred)
    sklearn = {"f1_weighted": f1_score, "precision_weighted": precision_score, "recall_weighted": recall_score}
    for name, score in sklearn.items():
        assert scores[name] == pytest.approx(score(y, pred, average="weighted", zero_division=0), abs=1e-15), name
    assert scores["accuracy"] == accuracy_score(y, pred)


def test_classification_scores_threshold_and_argmax():
    y = np.array([0, 1, 1, 0])
    scores = metrics.classification_scores(y, np.array([0.2, 0.7, 0.4, 0.1]), task_type="binary")
    assert scores["accuracy"] == 0.75
    assert scores["roc_auc"] == 1.0
    proba = np.array([[0.6, 0.4], [0.3, 0.7], [0.2, 0.8], [0.9, 0.1]])
    assert metrics.hard_predictions(proba, task_type="categorical").tolist() == [0, 1, 1, 0]


def test_regression_scores(rng):
    y = rng.normal(size=50)
    pred = y + rng.normal(size=50) * 0.5
    scores = metrics.regression_scores(y, pred)
    assert scores["r2"] == pytest.approx(r2_score(y, pred))
    assert scores["rmse"] == pytest.approx(np.sqrt(mean_squared_error(y, pred)))
    assert scores["spearman"] == pytest.approx(spearmanr(y, pred)[0])


def test_bad_task_type_and_text_inputs():
    with pytest.raises(ValueError, match=r"task_type: expected a classification type, found 'regression'"):
        metrics.roc_auc(np.array([0, 1]), np.array([0.1, 0.9]), task_type="regression")
    with pytest.raises(ValueError, match="expected one reference per prediction"):
        metrics.rouge1_recall(["a b"], [])


def test_rouge1_recall():
    pytest.importorskip("rouge_score")
    assert metrics.rouge1_recall(["mitochondrial genes"], ["mitochondrial ribosome genes"]) == pytest.approx(2 / 3)


def test_text_metrics_without_their_extra_say_how_to_install_it(monkeypatch):
    for module in ("rouge_score", "rouge_score.rouge_scorer"):  # as if rouge-score were not installed
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError) as raised:
        metrics.rouge1_recall(["a summary"], ["a summary"])
    assert str(raised.value) == ('the summary metric needs rouge_score, which is not installed; run: '
                                 'pip install "rouge-score>=0.1" "bert-score>=0.3"')  # not PyPI's other "genebench"
