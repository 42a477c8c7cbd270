"""The results format: one JSON document per (model, task), validated by `TaskResult`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from genebench.tasks.metadata import TaskMetadata


class ModelInfo(BaseModel):
    """Which model produced the embeddings, and how."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Hub id or local name, e.g. 'sentence-transformers/all-MiniLM-L6-v2'.")
    revision: str = Field(default="unknown", description="Commit hash or version of the weights.")
    adapter: str = Field(description="Input kind: token, description, dna, protein, precomputed, baseline.")
    settings: dict[str, Any] = Field(default_factory=dict, description="Pooling, description source, ...")


class MetricScores(BaseModel):
    """One metric: its value on each fold, and their mean and standard deviation."""

    model_config = ConfigDict(extra="forbid")

    folds: list[float]
    mean: float
    std: float


class Coverage(BaseModel):
    """How many of the task's rows the model's embeddings cover."""

    model_config = ConfigDict(extra="forbid")

    n_covered: int
    n_task: int
    fraction: float
    missing_genes: list[str] = Field(default_factory=list)


class TaskResult(BaseModel):
    """The score of one model on one task, with everything needed to reproduce and compare it."""

    model_config = ConfigDict(extra="forbid")

    genebench_version: str
    task: TaskMetadata
    dataset_revision: dict[str, Any] = Field(description="Source versions and a hash of the built data.")
    model: ModelInfo
    probe: dict[str, Any] = Field(description="Probe settings: C, tol, max_iter, pair mode, ...")
    coverage: Coverage
    scores: dict[str, MetricScores] = Field(default_factory=dict)
    main_score: str = "roc_auc"
    skipped: str | None = Field(default=None, description="Why the task was not scored, if it was not.")
    timing: dict[str, float] = Field(default_factory=dict)
    date: str
    config: dict[str, Any] = Field(default_factory=dict, description="The run configuration it ran with.")
