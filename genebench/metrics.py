"""Metrics as plain functions: ranking metrics take scores, label metrics take hard predictions.

ROC AUC is the primary score. It is always computed from predicted probabilities (for multi-label
tasks too: the reference scored those on hard 0/1 predictions, which is wrong). Text metrics for
PerturbQA's gene-set summaries import their libraries lazily.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from genebench.optional import TEXT, import_optional
from genebench.tasks.types import TaskTypeInfo
from genebench.tasks.types import task_type as type_info


def _classification(name: str) -> TaskTypeInfo:
    info = type_info(name)
    if not info.is_classification:
        raise ValueError(f"task_type: expected a classification type, found {name!r} (scored by regression_scores).")
    return info


_INF = float("inf")
RANGES: dict[str, tuple[float, float]] = {
    "roc_auc": (0.0, 1.0), "auc_per_gene": (0.0, 1.0), "f1_weighted": (0.0, 1.0), "precision_weighted": (0.0, 1.0),
    "recall_weighted": (0.0, 1.0), "accuracy": (0.0, 1.0), "r2": (-_INF, 1.0), "rmse": (0.0, _INF),
    "spearman": (-1.0, 1.0), "rouge1_recall": (0.0, 1.0), "bertscore_f1": (-1.0, 1.0),
}
"""The closed range of every metric genebench reports: a value outside it is not a score."""


def score_problem(metric: str, folds: Sequence[float], mean: float, std: float) -> str | None:
    """Why a metric's per-fold values, mean and std cannot be a score (not finite, out of its range), or None.

    >>> score_problem("roc_auc", [5.0, 5.0], 5.0, 0.0)
    'roc_auc fold 0 is 5.0, outside its range [0.0, 1.0]'
    """
    if metric not in RANGES:
        return f"unknown metric {metric!r} (known: {sorted(RANGES)})"
    for label, value in [*((f"fold {k}", v) for k, v in enumerate(folds)), ("mean", mean), ("std", std)]:
        if value is None or not np.isfinite(value):
            return f"{metric} {label} is {value}, not a finite number"
        low, high = (0.0, _INF) if label == "std" else RANGES[metric]
        if not low - 1e-9 <= value <= high + 1e-9:
            return f"{metric} {label} is {value}, outside its range [{low}, {high}]"
    if not folds:
        return f"{metric} has no per-fold values"
    return None


def midranks(values: np.ndarray) -> np.ndarray:
    """Ranks along axis 0 (1-based), ties given their mean rank, as `scipy.stats.rankdata` (method "average")
    computes them, value for value; a column holding NaN ranks as all NaN. Without scipy.stats, whose import
    costs seconds.

    Examples:
        >>> midranks(np.array([0.5, 0.1, 0.5, 0.9])).tolist()
        [2.5, 1.0, 2.5, 4.0]
    """
    values = np.asarray(values, dtype=np.float64)
    columns = values.reshape(len(values), -1)
    ranks = np.empty_like(columns)
    for j in range(columns.shape[1]):
        column = columns[:, j]
        if np.isnan(column).any():
            ranks[:, j] = np.nan
            continue
        order = np.argsort(column)  # ties are ranked as groups, so any sort order of them gives the same ranks
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        ordered = column[order]
        starts = np.r_[True, ordered[1:] != ordered[:-1]]
        dense = starts.cumsum()[inverse]
        count = np.r_[np.nonzero(starts)[0], len(starts)]
        ranks[:, j] = 0.5 * (count[dense] + count[dense - 1] + 1)
    return ranks.reshape(values.shape)


def _column_auc(y_true: np.ndarray, y_score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ROC AUC of each column (Mann-Whitney with mid-ranks, equal to the trapezoidal ROC area).

    Returns:
        (auc, positives), each shape (n_columns,); auc is NaN where a column has a single class.
    """
    y_true = np.asarray(y_true, dtype=bool)
    ranks = midranks(y_score)
    positives = y_true.sum(axis=0)
    return _auc_from_ranks(np.where(y_true, ranks, 0.0).sum(axis=0), positives, len(y_true) - positives), positives


def _auc_from_ranks(rank_sum: np.ndarray, positives: np.ndarray, negatives: np.ndarray) -> np.ndarray:
    """Mann-Whitney AUC from the positives' (mid-)rank sum; NaN where a group has a single class."""
    with np.errstate(divide="ignore", invalid="ignore"):
        auc = (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)
    return np.where((positives > 0) & (negatives > 0), auc, np.nan)


def roc_auc(y_true: np.ndarray, y_score: np.ndarray, *, task_type: str) -> float:
    """ROC AUC from scores, by task type.

    Args:
        y_true: shape (n,) 0/1 (binary types), (n,) class indices (categorical) or (n, n_labels) multi-hot.
        y_score: shape (n,) positive-class scores (binary types), or (n, n_columns) probabilities.
        task_type: a `TaskType` other than regression.

    Returns:
        The AUC. Categorical: one-vs-rest AUC per class present, weighted by class size. Multi-label:
        AUC per label, weighted by positives, over labels with both classes in `y_true`. NaN when no
        column has both classes.

    Examples:
        >>> roc_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]), task_type="binary")
        0.75
    """
    info = _classification(task_type)
    y_true, y_score = np.asarray(y_true), np.asarray(y_score)
    if not info.has_columns:
        return float(_column_auc(y_true[:, None], y_score.reshape(len(y_score), -1)[:, -1:])[0][0])
    auc, weight = _column_auc(info.indicators(y_true, y_score.shape[1]), y_score)
    defined = ~np.isnan(auc)
    if not defined.any():
        return float("nan")
    return float(np.average(auc[defined], weights=weight[defined]))


def auc_per_gene(y_true: np.ndarray, y_score: np.ndarray, groups: np.ndarray) -> float:
    """PerturbQA's metric: ROC AUC within each read-out gene, then the unweighted mean.

    Genes whose rows all carry the same label are skipped, as in PerturbQA's `eval.py`.

    Args:
        y_true: shape (n,), 0/1.
        y_score: shape (n,), positive-class scores.
        groups: shape (n,), the read-out gene of each row.

    Examples:
        >>> auc_per_gene(np.array([0, 1, 0, 1, 1]), np.array([.1, .9, .8, .2, .5]), np.array(list("aabbc")))
        0.5
    """
    codes, _ = pd.factorize(np.asarray(groups), sort=True)
    y_true, y_score = np.asarray(y_true, dtype=bool), np.asarray(y_score, dtype=np.float64)
    order = np.lexsort((y_score, codes))  # by gene, then score: every gene's rows ranked in one pass
    gene, score, positive = codes[order], y_score[order], y_true[order]
    n_genes = int(codes.max()) + 1 if len(codes) else 0
    sizes = np.bincount(gene, minlength=n_genes)
    rank = np.arange(len(gene)) - np.repeat(np.cumsum(sizes) - sizes, sizes) + 1.0  # 1-based, within gene
    new_value = np.r_[True, (gene[1:] != gene[:-1]) | (score[1:] != score[:-1])]
    tie = np.cumsum(new_value) - 1
    first, last = rank[new_value], np.r_[rank[np.flatnonzero(new_value)[1:] - 1], rank[-1:]]
    mid_rank = (first + last)[tie] / 2  # tied scores share their mean rank
    positives = np.bincount(gene, weights=positive, minlength=n_genes)
    rank_sum = np.bincount(gene, weights=np.where(positive, mid_rank, 0.0), minlength=n_genes)
    auc = _auc_from_ranks(rank_sum, positives, sizes - positives)
    defined = ~np.isnan(auc)
    return float(np.mean(auc[defined])) if defined.any() else float("nan")


def hard_predictions(y_score: np.ndarray, *, task_type: str) -> np.ndarray:
    """Labels from probabilities: 0.5 threshold (binary, each label) or the most probable class."""
    y_score = np.asarray(y_score)
    if _classification(task_type).is_multiclass:
        return np.argmax(y_score, axis=1)
    return (y_score >= 0.5).astype(np.int64)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator as float64, 0 where the denominator is 0 (scikit-learn's zero_division=0)."""
    denominator = np.asarray(denominator, dtype=np.float64)
    return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), 0.0)


def label_scores(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    """Weighted F1, precision and recall, and accuracy, from hard predictions (multi-hot for multi-label).

    The same values as scikit-learn's `precision_recall_fscore_support(average="weighted", zero_division=0)`
    and `accuracy_score` (exact match for multi-label), counted from one confusion matrix.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.ndim == 2 and y_true.shape[1] == 1:  # a column vector is one binary label, as in scikit-learn
        y_true, y_pred = y_true[:, 0], np.asarray(y_pred).reshape(len(y_pred), -1)[:, 0]
    if y_true.ndim == 2:
        truth, guess = y_true.astype(bool), y_pred.astype(bool)
        tp, predicted, support = (truth & guess).sum(axis=0), guess.sum(axis=0), truth.sum(axis=0)
        accuracy = float(np.mean((truth == guess).all(axis=1)))
    else:
        labels = np.union1d(y_true, y_pred)
        pairs = np.searchsorted(labels, y_true) * len(labels) + np.searchsorted(labels, y_pred)
        confusion = np.bincount(pairs, minlength=len(labels) ** 2).reshape(len(labels), len(labels))
        tp, predicted, support = np.diag(confusion), confusion.sum(axis=0), confusion.sum(axis=1)
        accuracy = float(np.mean(y_true == y_pred))
    weights = support if support.sum() else None  # no positives at all: plain mean, as scikit-learn does
    scores = {"f1": _ratio(2.0 * tp, support + predicted), "precision": _ratio(tp, predicted),
              "recall": _ratio(tp, support)}
    return {**{f"{name}_weighted": float(np.average(values, weights=weights)) for name, values in scores.items()},
            "accuracy": accuracy}


MULTILABEL_AUC: tuple[str, ...] = ("probabilities", "predictions")
"""How a multi-label task's ROC AUC is computed: from probabilities (genebench's, the default), or from hard 0/1
predictions, per label weighted by its positives, as the reference does (`make_scorer(roc_auc_score,
average="weighted")` calls `predict`): "predictions" is there to reproduce the paper, not to measure a model."""


def classification_scores(y_true: np.ndarray, y_score: np.ndarray, *, task_type: str,
                          groups: np.ndarray | None = None, thresholded: bool = True,
                          multilabel_auc: str = "probabilities") -> dict[str, float]:
    """Every classification metric for one fold: AUC from scores, the rest from thresholded scores.

    Args:
        y_true: see `roc_auc`.
        y_score: see `roc_auc`.
        task_type: a classification `TaskType`.
        groups: shape (n,), read-out genes; when given, `auc_per_gene` is added (binary types only).
        thresholded: add the metrics of thresholded scores (False: the AUCs alone, every main score).
        multilabel_auc: one of `MULTILABEL_AUC`; "predictions" scores a multi-label task's ROC AUC from its hard
            predictions (the reference's, to reproduce the paper). Other task types are unaffected.

    Examples:
        >>> y_true, y_score = np.array([[1, 0], [0, 1], [1, 1]]), np.array([[.9, .2], [.6, .7], [.4, .8]])
        >>> classification_scores(y_true, y_score, task_type="multi-label", thresholded=False)["roc_auc"]
        0.75
        >>> classification_scores(y_true, y_score, task_type="multi-label", thresholded=False,
        ...                       multilabel_auc="predictions")["roc_auc"]
        0.625
    """
    if multilabel_auc not in MULTILABEL_AUC:
        raise ValueError(f"multilabel_auc: expected one of {list(MULTILABEL_AUC)}, found {multilabel_auc!r}.")
    hard = multilabel_auc == "predictions" and _classification(task_type).is_multilabel
    auc_input = hard_predictions(y_score, task_type=task_type) if hard else y_score
    scores = {"roc_auc": roc_auc(y_true, auc_input, task_type=task_type)}
    if groups is not None:
        scores["auc_per_gene"] = auc_per_gene(y_true, y_score, groups)
    if not thresholded:
        return scores
    return scores | label_scores(y_true, hard_predictions(y_score, task_type=task_type))


def regression_scores(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    """R^2, RMSE and Spearman correlation.

    Examples:
        >>> regression_scores(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]))["r2"]
        1.0
    """
    from scipy.stats import spearmanr

    y_true, y_pred = np.asarray(y_true, dtype=np.float64), np.asarray(y_pred, dtype=np.float64)
    residual = float(((y_true - y_pred) ** 2).sum())
    total = float(((y_true - y_true.mean()) ** 2).sum())
    return {"r2": 1.0 - residual / total if total > 0 else float("nan"),
            "rmse": float(np.sqrt(residual / len(y_true))),
            "spearman": float(spearmanr(y_true, y_pred)[0])}  # [0]: scipy < 1.10 has no .statistic


def rouge1_recall(predictions: Sequence[str], references: Sequence[str]) -> float:
    """Mean ROUGE-1 recall of each prediction against its reference (needs `rouge-score`)."""
    rouge_scorer = import_optional("rouge_score.rouge_scorer", needed_for="the summary metric", install=TEXT)
    _check_pairs(predictions, references)
    scorer = rouge_scorer.RougeScorer(["rouge1"])
    return float(np.mean([scorer.score(ref, pred)["rouge1"].recall for pred, ref in zip(predictions, references)]))


def bertscore(predictions: Sequence[str], references: Sequence[str], *, model_type: str,
              num_layers: int | None = None, batch_size: int = 64, device: str | None = None) -> dict[str, float]:
    """Mean BERTScore precision, recall and F1 (needs `bert-score`).

    Args:
        predictions: generated summaries.
        references: one reference per prediction.
        model_type: a Hub id or a local model folder.
        num_layers: which layer's embeddings to use; required when `model_type` is not one bert-score knows.
        batch_size: sentences per forward pass.
        device: torch device; None lets bert-score choose (a GPU when there is one).
    """
    score = import_optional("bert_score", needed_for="the summary metric", install=TEXT).score
    _check_pairs(predictions, references)
    precision, recall, f1 = score(list(predictions), list(references), model_type=model_type, num_layers=num_layers,
                                  batch_size=batch_size, device=device, lang="en")
    return {"bertscore_precision": float(precision.mean()), "bertscore_recall": float(recall.mean()),
            "bertscore_f1": float(f1.mean())}


def _check_pairs(predictions: Sequence[str], references: Sequence[str]) -> None:
    if len(predictions) != len(references) or not predictions:
        raise ValueError(f"text metrics: expected one reference per prediction and at least one pair, found "
                         f"{len(predictions)} predictions and {len(references)} references.")
