"""Which tasks a run scores: the filters of `--tasks/--family/--category/--type/--no-derived`, as one record."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from genebench.tasks.metadata import Folds, TaskMetadata


class TaskSelection(BaseModel):
    """Task filters; they combine, and none selects every task. The `tasks:` block of a sweep file.

    Attributes:
        tasks: task names (aliases resolve), e.g. ["TF vs non-TF", "Pathways"].
        family: task families, e.g. ["humantfs", "reactome"].
        category: task categories (`genebench.tasks.metadata.CATEGORIES`).
        type: task types (`genebench.tasks.metadata.TASK_TYPES`).
        no_derived: leave out the derived binary tasks (one per label of a multi-label task).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: list[str] | None = None
    family: list[str] | None = None
    category: list[str] | None = None
    type: list[str] | None = None
    no_derived: bool = False

    def select(self, data, folds: Folds = "paper") -> list[TaskMetadata]:
        """The metadata of the selected tasks of `data` (a `BenchmarkData`), in registry order, with the control
        scores of fold scheme `folds` (so shortcut flags follow the scheme).

        Raises:
            UnknownTaskError: a task, family, category or type that does not exist.
        """
        from genebench.tasks.registry import list_tasks

        chosen = list_tasks(family=self.family, category=self.category, type=self.type,
                            include_derived=not self.no_derived, data=data, folds=folds)
        if self.tasks:
            wanted = {data.metadata(name, folds).name for name in self.tasks}
            chosen = [meta for meta in chosen if meta.name in wanted]
        return list(chosen)
