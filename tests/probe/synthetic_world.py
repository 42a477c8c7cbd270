"""Synthetic tasks and embeddings with a known signal, built directly as `Task` objects (test helper)."""

from __future__ import annotations

import numpy as np

from genebench.embeddings import GeneEmbeddings
from genebench.tasks.folds import assign_folds
from genebench.tasks.metadata import TaskMetadata
from genebench.tasks.task import Task

N_GENES, N_DIMS = 400, 24


def metadata(name: str, type_: str, labels: tuple[str, ...], **extra) -> TaskMetadata:
    """Minimal, valid metadata for a synthetic task."""
    return TaskMetadata(name=name, category="protein properties", type=type_, family="synthetic",
                        label_names=labels, source_url="https://example.org", source_version="1", license="CC0",
                        citation="synthetic", **extra)


def make_task(name: str, type_: str, genes: np.ndarray, labels: np.ndarray, label_names: tuple[str, ...], *,
              folds: np.ndarray | None = None, **extra) -> Task:
    """A task over `genes` with labels and (when not given) seeded stratified folds."""
    if folds is None:
        folds = assign_folds(np.asarray(genes, dtype=str) if genes.ndim == 1 else np.array(
            ["\t".join(p) for p in genes]), labels, multilabel=type_ == "multi-label", n_folds=5, seed=0,
            task_name=name)
    meta = metadata(name, type_, label_names, n_entities=len(genes), **extra)
    return Task(metadata=meta, entities=np.asarray(genes, dtype=object), labels=labels, fold_ids=np.asarray(folds))


def derived_task(parent: Task, column: int) -> Task:
    """The derived binary task of one label column of a multi-label task."""
    label = parent.metadata.label_names[column]
    return make_task(f"{parent.name};{label}", "derived binary", parent.entities,
                     parent.labels[:, column].astype(np.int64), ("no", "yes"), folds=parent.fold_ids,
                     parent=parent.name)


class World:
    """Genes with latent factors; embeddings are a noisy linear view of them; labels depend on them."""

    def __init__(self, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.genes = np.array([f"G{i:04d}" for i in range(N_GENES)], dtype=object)
        self.latent = rng.normal(size=(N_GENES, 6))
        vectors = self.latent @ rng.normal(size=(6, N_DIMS)) + 0.3 * rng.normal(size=(N_GENES, N_DIMS))
        self.embeddings = GeneEmbeddings(self.genes, vectors.astype(np.float32), model={"id": "synthetic"})
        self.rng = rng

    def binary(self, name: str = "bin", n: int = 300) -> Task:
        labels = (self.latent[:n, 0] + 0.5 * self.rng.normal(size=n) > 0.3).astype(np.int64)
        return make_task(name, "binary", self.genes[:n], labels, ("no", "yes"))

    def categorical(self, name: str = "cat") -> Task:
        labels = np.argmax(self.latent[:, :3] + 0.5 * self.rng.normal(size=(N_GENES, 3)), axis=1)
        return make_task(name, "categorical", self.genes, labels, ("a", "b", "c"))

    def multilabel(self, name: str = "multi", n_labels: int = 4) -> Task:
        scores = self.latent[:, :n_labels] + 0.5 * self.rng.normal(size=(N_GENES, n_labels))
        labels = (scores > 0.8).astype(np.uint8)
        return make_task(name, "multi-label", self.genes, labels, tuple(f"L{i}" for i in range(n_labels)))

    def derived(self, parent: Task, column: int) -> Task:
        return derived_task(parent, column)

    def pairs(self, name: str = "pairs", n: int = 600, **extra) -> Task:
        a, b = self.rng.integers(0, N_GENES, n), self.rng.integers(0, N_GENES, n)
        labels = (self.latent[a, 1] + self.latent[b, 1] + 0.5 * self.rng.normal(size=n) > 0).astype(np.int64)
        return make_task(name, "gene-pair binary", np.stack([self.genes[a], self.genes[b]], axis=1), labels,
                         ("no", "yes"), **{"entity_types": ("gene", "gene"), **extra})

    def regression(self, name: str = "reg") -> Task:
        target = self.latent[:, 2] * 2 + 0.3 * self.rng.normal(size=N_GENES)
        folds = np.arange(N_GENES) % 5
        return make_task(name, "regression", self.genes, target, (), folds=folds)
