"""The one table of task types: how labels are shaped and decoded, which probe fits them, how they are scored.

Every place that depends on a task's type reads `TASK_TYPE_TABLE` (through `task_type`) instead of comparing
type names. Adding a task type is a row here and, when its target is new, its solver.

================  ===========  ==============================================  ==========
type              target       probe                                           main score
================  ===========  ==============================================  ==========
binary            binary       logistic, P(label 1)                            roc_auc
categorical       multiclass   multinomial logistic (or one-vs-rest)           roc_auc
multi-label       multilabel   one logistic per label, all in one solve        roc_auc
derived binary    binary       the parent's multi-label fit, its column        roc_auc
gene-pair binary  binary       logistic on pair vectors                        roc_auc
regression        continuous   ridge                                           r2
================  ===========  ==============================================  ==========

The targets are scikit-learn's `type_of_target` names: `binary` and `multiclass` labels are one class per row
(integer codes), `multilabel` labels a set of classes per row (multi-hot), `continuous` a number per row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Target = Literal["binary", "multiclass", "multilabel", "continuous"]


@dataclass(frozen=True)
class TaskTypeInfo:
    """What one task type means.

    Attributes:
        target: the label shape (scikit-learn's target type), which fixes decoding, probe family and metrics.
        main_score: the metric tasks of this type are ranked by (train-test pair tasks use `auc_per_gene`).
        description: one line for docs and `genebench tasks`.
        unordered_pairs: rows are pairs of genes whose order carries no meaning ((A, B) is (B, A)).
    """

    target: Target
    main_score: str
    description: str
    unordered_pairs: bool = False

    @property
    def is_classification(self) -> bool:
        """Whether labels are classes (scored by ROC AUC from probabilities)."""
        return self.target != "continuous"

    @property
    def is_multiclass(self) -> bool:
        """Whether each row holds one class among several (scored one-vs-rest, predicted by the most probable)."""
        return self.target == "multiclass"

    @property
    def is_multilabel(self) -> bool:
        """Whether each row holds a set of labels (multi-hot), each label a binary question of its own."""
        return self.target == "multilabel"

    @property
    def is_binary(self) -> bool:
        """Whether each row holds one of two classes (held-out scores: one column, P(class 1))."""
        return self.target == "binary"

    @property
    def has_columns(self) -> bool:
        """Whether held-out scores are one column per class or label, shape (n, n_columns); else one per row."""
        return self.target in ("multiclass", "multilabel")

    def indicators(self, labels: np.ndarray, n_columns: int) -> np.ndarray:
        """Labels as one column per class or label, shape (n, n_columns): one-hot over `n_columns` classes
        (multiclass), as they are (multilabel, multi-hot), or the positive class (binary, one column).

        Examples:
            >>> task_type("categorical").indicators(np.array([0, 2]), 3).astype(int).tolist()
            [[1, 0, 0], [0, 0, 1]]
        """
        if self.target == "multiclass":
            return labels[:, None] == np.arange(n_columns)[None, :]
        if self.target == "multilabel":
            return labels
        return (labels == 1)[:, None]

    def class_matrix(self, labels: np.ndarray, n_classes: int) -> np.ndarray:
        """Labels as one 0/1 column per class or label, shape (n, n_classes): one-hot over `n_classes` classes (every
        single-label type, binary included), as they are (multilabel). The inverse of `labels_of`.

        Examples:
            >>> task_type("binary").class_matrix(np.array([1, 0]), 2).tolist()
            [[0, 1], [1, 0]]
        """
        return labels if self.is_multilabel else np.eye(n_classes, dtype=np.uint8)[labels]

    def labels_of(self, classes: np.ndarray) -> np.ndarray:
        """Labels as this type holds them from a `class_matrix`: the matrix (multilabel), else each row's class.

        Examples:
            >>> task_type("categorical").labels_of(np.array([[0, 0, 1], [1, 0, 0]])).tolist()
            [2, 0]
        """
        return classes if self.is_multilabel else np.argmax(classes, axis=1)

    def label_lists(self, labels: Iterable[Any]) -> list[list[Any]]:
        """Each row's labels as a list: a multilabel row's as they are, a single label as a list of one.

        Examples:
            >>> task_type("binary").label_lists(["Yes", "No"]), task_type("multi-label").label_lists([("a", "b")])
            ([['Yes'], ['No']], [['a', 'b']])
        """
        return [list(row) for row in labels] if self.is_multilabel else [[label] for label in labels]

    def positives(self, counts: np.ndarray) -> np.ndarray:
        """Of class counts, shape (n_groups, n_classes), the positives of each group (a fold): its class 1's count
        (binary), else its scarcest class's or label's.

        Examples:
            >>> task_type("binary").positives(np.array([[5, 2], [1, 3]])).tolist()
            [2, 3]
        """
        return counts[:, 1] if self.is_binary else counts.min(axis=1)

    def ranking_values(self, proba: np.ndarray) -> np.ndarray:
        """Held-out probabilities, shape (n, n_columns), as the values stored for them: log-probabilities of
        classes (multiclass: a softmax's per-class ranking is that of its log-probabilities, not of its logits),
        else logits.

        Examples:
            >>> task_type("binary").ranking_values(np.array([[0.5]])).tolist()
            [[0.0]]
        """
        with np.errstate(divide="ignore"):
            return np.log(proba) if self.target == "multiclass" else np.log(proba) - np.log1p(-proba)

    def probabilities(self, values: np.ndarray) -> np.ndarray:
        """The inverse of `ranking_values`: probabilities, shape (n,) for one binary column, else (n, n_columns).

        Examples:
            >>> task_type("categorical").probabilities(np.log(np.array([[0.25, 0.75]]))).round(2).tolist()
            [[0.25, 0.75]]
        """
        with np.errstate(over="ignore"):
            proba = np.exp(values) if self.target == "multiclass" else 1 / (1 + np.exp(-values))
        return proba if self.has_columns else proba[:, 0]


TASK_TYPE_TABLE: dict[str, TaskTypeInfo] = {
    "binary": TaskTypeInfo("binary", "roc_auc", "two classes, one per gene"),
    "categorical": TaskTypeInfo("multiclass", "roc_auc", "several classes, one per gene"),
    "multi-label": TaskTypeInfo("multilabel", "roc_auc", "a set of labels per gene"),
    "derived binary": TaskTypeInfo("binary", "roc_auc", "one label of a multi-label task against the rest"),
    "gene-pair binary": TaskTypeInfo("binary", "roc_auc", "two classes, one per pair of genes (or gene and partner)",
                                     unordered_pairs=True),
    "regression": TaskTypeInfo("continuous", "r2", "a number per gene or pair"),
}
"""Task type -> its `TaskTypeInfo`; its keys are exactly `genebench.tasks.metadata.TASK_TYPES`, in order."""


def task_type(name: str) -> TaskTypeInfo:
    """The row of `TASK_TYPE_TABLE` for a task type.

    Raises:
        ValueError: `name` is not a task type.

    Examples:
        >>> task_type("categorical").target
        'multiclass'
    """
    try:
        return TASK_TYPE_TABLE[name]
    except KeyError:
        raise ValueError(f"task_type: expected one of {list(TASK_TYPE_TABLE)}, found {name!r}.") from None
