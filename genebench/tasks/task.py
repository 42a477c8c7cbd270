"""A loaded task: entities, labels and fold ids as numpy arrays, plus its metadata."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from genebench.tasks.metadata import TaskMetadata

TRAIN_ONLY = -1
"""Fold value of rows that are always trained on (the train split of a train-test task)."""


@dataclass(frozen=True, eq=False)
class Task:
    """One task, ready to probe.

    Attributes:
        metadata: the task's `TaskMetadata`.
        entities: shape (n_rows,) of gene symbols, or (n_rows, 2) for pair tasks (gene, partner).
        labels: shape (n_rows,) of class indices into `metadata.label_names` (binary, categorical,
            derived binary, gene pairs), (n_rows, n_labels) multi-hot uint8 (multi-label), or float
            targets (regression).
        fold_ids: shape (n_rows,), the held-out fold of each row under the scheme it was loaded with;
            `TRAIN_ONLY` (-1) rows are never held out.
    """

    metadata: TaskMetadata
    entities: np.ndarray
    labels: np.ndarray
    fold_ids: np.ndarray

    @property
    def name(self) -> str:
        """The task's name."""
        return self.metadata.name

    @property
    def folds(self) -> np.ndarray:
        """The old name of `fold_ids`, kept for code written against genebench 0.1 (with a FutureWarning)."""
        warnings.warn("Task.folds is now Task.fold_ids (a scheme is `scheme`, its fold ids `fold_ids`)",
                      FutureWarning, stacklevel=2)
        return self.fold_ids

    @property
    def n_splits(self) -> int:
        """How many train/test splits the task is scored on."""
        return int(self.fold_ids.max()) + 1

    def splits(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (train_rows, test_rows) index arrays, one pair per held-out fold."""
        for fold in range(self.n_splits):
            yield np.flatnonzero(self.fold_ids != fold), np.flatnonzero(self.fold_ids == fold)

    def gene_entities(self) -> np.ndarray:
        """The gene symbol of each gene entity of each row (both of a gene pair), repeats included, shape (n,)."""
        columns = [i for i, kind in enumerate(self.metadata.entity_types) if kind == "gene"]
        entities = self.entities if self.entities.ndim == 2 else self.entities[:, None]
        return entities[:, columns].ravel()

    def genes(self) -> np.ndarray:
        """Every distinct gene symbol the task needs a vector for, sorted."""
        return np.sort(pd.unique(self.gene_entities()))

    def __repr__(self) -> str:
        return f"Task({self.name!r}, type={self.metadata.type!r}, n={len(self.fold_ids)})"
