"""Task metadata: a frozen record per task, declared next to its family as data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from genebench.tasks.families import DOMINANT_SHARE

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

Scheme = Literal["paper", "family"]
"""Which stored fold assignment a task is scored on: the paper's (`fold`) or family-held-out (`family_fold`)."""
FOLD_SCHEMES: tuple[str, ...] = Scheme.__args__

FoldScheme = Literal["stratified", "cold genes"]
"""How `cv` folds are assigned (see `genebench.tasks.folds`): label-stratified rows, or, for pair tasks, gene
groups such that no gene of a held-out pair appears in any training pair."""

SHORTCUT_AUC = 0.9
"""A task on which a control baseline (see `genebench.controls`) reaches this main score is shortcut-solvable."""

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
    fold_scheme: FoldScheme = "stratified"
    min_class_size: int = Field(default=5, ge=1, description="Classes or labels with fewer genes are dropped.")
    derived_min_prevalence: float | None = Field(
        default=None, ge=0, le=1, description="Multi-label only: derive a binary task per label this frequent."
    )
    notes: str = ""

    @property
    def has_family_folds(self) -> bool:
        """Whether the task has its own family folds: single-gene cv tasks; pair and train-test tasks keep their
        split under family folds (`family_fold == fold`)."""
        return self.evaluation == "cv" and len(self.entity_types) == 1

    @model_validator(mode="after")
    def _check_fold_scheme(self) -> TaskSpec:
        if self.fold_scheme == "cold genes" and (len(self.entity_types) != 2 or self.evaluation != "cv"):
            raise ValueError(f"task '{self.name}': fold_scheme 'cold genes' needs a cv task over pairs, found "
                             f"entity_types {self.entity_types} and evaluation '{self.evaluation}'.")
        return self


def best_of(controls: Mapping[str, float]) -> tuple[str, float] | None:
    """The control with the highest score and that score (ties: the later name), or None without controls.

    Examples:
        >>> best_of({"name": 0.91, "random": 0.5})
        ('name', 0.91)
    """
    if not controls:
        return None
    name = max(controls, key=lambda control: (controls[control], control))
    return name, controls[name]


def format_control(best: tuple[str, float] | None) -> str | None:
    """A best control as tables show it: "name 1.000", or None.

    Examples:
        >>> format_control(("name", 1.0))
        'name 1.000'
    """
    return None if best is None else f"{best[0]} {best[1]:.3f}"


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
    family_unscorable: str | None = Field(
        default=None, description="Why the task cannot be scored under family folds (e.g. HLA: its genes fall in two "
        "families, too few for the folds); such a task is skipped under family folds with this reason."
    )
    family_report: dict[str, Any] = Field(
        default_factory=dict, description="Family folds (`genebench.tasks.folds` step 6): n_families, "
        "largest_family, largest_family_share, fold_imbalance (the largest family fold's rows over the mean fold's), "
        "positives_per_fold (the fewest over labels per fold for categorical and multi-label tasks) and "
        "labels_missing_a_fold (labels some fold holds no positive of)."
    )
    incomplete: str | None = Field(
        default=None, description="Why the task's labels are incomplete, with the figures (`genebench.tasks.audit`); "
        "incomplete tasks are kept out of summaries by default."
    )
    dropped_labels: dict[str, str] = Field(
        default_factory=dict, description="Labels of the source left out of the task -> why (e.g. UniProt parent "
        "keywords from a source whose parents lost their own genes, `dataset_builders.uniprot_keywords`)."
    )
    incomplete_labels: dict[str, str] = Field(
        default_factory=dict, description="Multi-label parents: labels without a derived task of their own that "
        "are incomplete (`genebench.tasks.audit`) -> why, with the figures."
    )
    controls: dict[str, float] = Field(
        default_factory=dict, description="Main score of each control baseline on this task (`genebench.controls`) "
        "under the fold scheme the metadata was read for (`BenchmarkData.metadata(name, folds)`), read from the data "
        "folder's control table; empty when none were computed. Not stored in tasks.parquet."
    )

    @property
    def is_derived(self) -> bool:
        """Whether this task is one label of a multi-label parent."""
        return self.parent is not None

    @property
    def dominant_family(self) -> str | None:
        """Where one gene family holds more than `genebench.tasks.families.DOMINANT_SHARE` of the task's genes: which,
        its share and the family folds' imbalance ("group:28 holds 51% of the genes; family folds 2.65x uneven");
        else None. Such a task's family-fold score rests on few families."""
        report = self.family_report
        share = report.get("largest_family_share", 0.0)
        if share <= DOMINANT_SHARE:
            return None
        imbalance = report.get("fold_imbalance")
        uneven = f"; family folds {imbalance:.2f}x uneven" if imbalance is not None else ""
        return f"{report['largest_family']} holds {share:.0%} of the genes{uneven}"

    @property
    def best_control(self) -> tuple[str, float] | None:
        """The control with the highest main score on this task and that score, or None without controls."""
        return best_of(self.controls)

    @property
    def is_shortcut_solvable(self) -> bool:
        """Whether a control reaches `SHORTCUT_AUC`: a good score here need not mean a model understands genes."""
        best = self.best_control
        return best is not None and best[1] >= SHORTCUT_AUC
