"""Task metadata: a frozen record per task, declared next to its family as data."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Category = Literal[
    "genomic properties",
    "regulatory functions",
    "localization",
    "biological processes",
    "protein properties",
]
"""The paper's five task categories."""

TaskType = Literal["binary", "categorical", "multi-label", "derived binary", "gene-pair binary", "regression"]
"""How labels are shaped, which picks the probe and the metrics."""

Evaluation = Literal["cv", "train-test"]
"""`cv`: k-fold cross-validation over the stored folds; `train-test`: a fixed published split."""

CATEGORIES: tuple[str, ...] = Category.__args__
TASK_TYPES: tuple[str, ...] = TaskType.__args__


class TaskSpec(BaseModel):
    """What a family declares about a task before any data is read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The reference's task name, e.g. 'TF vs non-TF'.")
    category: Category
    type: TaskType
    description: str = ""
    aliases: tuple[str, ...] = Field(default=(), description="Older names that still resolve, with a warning.")
    entity_types: tuple[str, ...] = ("gene",)
    evaluation: Evaluation = "cv"
    min_class_size: int = Field(default=5, ge=1, description="Classes or labels with fewer genes are dropped.")
    derived_min_prevalence: float | None = Field(
        default=None, ge=0, le=1, description="Multi-label only: derive a binary task per label this frequent."
    )
    notes: str = ""


class TaskMetadata(TaskSpec):
    """A built task: its spec plus everything the data settled (labels, sizes, source versions)."""

    family: str
    label_names: tuple[str, ...] = Field(
        default=(), description="Class names; for binary tasks index 1 is the positive class."
    )
    parent: str | None = Field(default=None, description="Derived binary tasks: the multi-label parent.")
    n_entities: int = 0
    n_folds: int = 5
    seed: int = 0
    source_url: str
    source_version: str
    license: str
    citation: str
    hgnc_version: str = "unknown"
    symbol_report: dict[str, int] = Field(default_factory=dict)

    @property
    def is_derived(self) -> bool:
        """Whether this task is one label of a multi-label parent."""
        return self.parent is not None
