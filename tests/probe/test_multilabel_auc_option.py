"""The reference's multi-label ROC AUC (from hard predictions), a labelled option beside genebench's default."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import make_scorer, roc_auc_score
from sklearn.multioutput import MultiOutputClassifier

from genebench.metrics import classification_scores
from genebench.probe.settings import ProbeSettings


def test_predictions_auc_is_the_references_scorer():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 6))
    Y = (X[:, :4] + rng.standard_normal((300, 4)) > 0.8).astype(int)
    model = MultiOutputClassifier(LogisticRegression()).fit(X[:200], Y[:200])
    proba = np.stack([p[:, 1] for p in model.predict_proba(X[200:])], axis=1)
    reference = make_scorer(roc_auc_score, average="weighted")(model, X[200:], Y[200:])  # calls predict
    ours = classification_scores(Y[200:], proba, task_type="multi-label", multilabel_auc="predictions")
    assert ours["roc_auc"] == pytest.approx(reference, abs=1e-12)
    default = classification_scores(Y[200:], proba, task_type="multi-label")
    assert default["roc_auc"] == pytest.approx(roc_auc_score(Y[200:], proba, average="weighted"), abs=1e-12)
    assert default["roc_auc"] > ours["roc_auc"] + 0.05  # hard predictions throw the ranking away
    assert {k: v for k, v in default.items() if k != "roc_auc"} == \
        {k: v for k, v in ours.items() if k != "roc_auc"}  # the other metrics are the same


def test_other_task_types_are_unaffected():
    y, score = np.array([0, 1, 1, 0, 1]), np.array([0.2, 0.7, 0.4, 0.6, 0.9])
    assert classification_scores(y, score, task_type="binary", multilabel_auc="predictions") == \
        classification_scores(y, score, task_type="binary")
    with pytest.raises(ValueError, match=r"multilabel_auc: expected one of \['probabilities', 'predictions'\]"):
        classification_scores(y, score, task_type="binary", multilabel_auc="hard")


def test_the_option_is_in_the_run_identity_only_when_set():
    assert "multilabel_auc" not in ProbeSettings().to_dict()  # runs made before the option keep their identity
    chosen = ProbeSettings(multilabel_auc="predictions").to_dict()
    assert chosen["multilabel_auc"] == "predictions"
    assert ProbeSettings.from_dict(chosen) == ProbeSettings(multilabel_auc="predictions")
    with pytest.raises(ValueError, match=r"ProbeSettings.multilabel_auc: expected one of"):
        ProbeSettings(multilabel_auc="hard")
