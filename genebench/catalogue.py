"""The catalogue: every task of a data folder, filtered by family, category and type (`list_tasks`), and the
task selection of a run (`TaskSelection`). It queries an opened data folder, so it sits above `genebench.data`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ConfigDict

from genebench.data import BenchmarkData, open_data
from genebench.errors import UnknownTaskError
from genebench.registry import unknown_name_message
from genebench.tasks.metadata import CATEGORIES, TASK_TYPES, Scheme, TaskMetadata, format_control
from genebench.tasks.task import Task

DataLike = str | Path | BenchmarkData | None


class TaskList(tuple):
    """A tuple of `TaskMetadata` with table views; its repr names the tasks (the metadata is one `[i]` away).

    Examples:
        >>> list_tasks(family="humantfs")
        TaskList(1 task: 'TF vs non-TF')
    """

    def __repr__(self) -> str:
        names = ", ".join(repr(m.name) for m in self[:5]) + (f", … ({len(self) - 5} more)" if len(self) > 5 else "")
        return f"TaskList({len(self)} task{'' if len(self) == 1 else 's'}{': ' if self else ''}{names})"

    def to_dataframe(self) -> pd.DataFrame:
        """One row per task: name, family, category, type, rows, labels, parent, best control ("name 1.000"),
        whether it is shortcut-solvable (see `genebench.controls`) and the family that dominates it, if one does."""
        return pd.DataFrame([
            {"name": m.name, "family": m.family, "category": m.category, "type": m.type,
             "n_entities": m.n_entities, "n_labels": len(m.label_names), "parent": m.parent,
             "best_control": format_control(m.best_control),
             "shortcut": m.is_shortcut_solvable, "dominant_family": m.dominant_family}
            for m in self
        ])

    def to_markdown(self) -> str:
        """The same table as markdown, with blank cells where a task has no parent or control."""
        return self.to_dataframe().fillna("").to_markdown(index=False)

    @property
    def names(self) -> list[str]:
        """Task names, in order."""
        return [m.name for m in self]


def resolve_data(data: DataLike) -> BenchmarkData:
    """An opened `BenchmarkData` from a folder, a Hub id, an opened one, or None (the default data)."""
    return data if isinstance(data, BenchmarkData) else open_data(data)


def list_tasks(
    *,
    family: str | list[str] | None = None,
    category: str | list[str] | None = None,
    type: str | list[str] | None = None,
    include_derived: bool = True,
    data: DataLike = None,
    scheme: Scheme = "paper",
) -> TaskList:
    """Tasks matching every given filter; each filter takes one value or a list. Their metadata carries the control
    scores of fold scheme `scheme`.

    Examples:
        >>> list_tasks(category="localization", type="multi-label").names
        ['Subcellular location', 'UniProt keyword Cellular component']
        >>> list_tasks(category="localization", type="multi-label").to_dataframe()[["name", "family"]]
                                         name            family
        0                Subcellular location               hpa
        1  UniProt keyword Cellular component  uniprot_keywords
    """
    opened = resolve_data(data)
    families = _check("family", family, opened.families)
    categories = _check("category", category, list(CATEGORIES))
    types = _check("type", type, list(TASK_TYPES))
    return TaskList(
        meta for meta in opened.tasks(scheme)
        if (families is None or meta.family in families)
        and (categories is None or meta.category in categories)
        and (types is None or meta.type in types)
        and (include_derived or not meta.is_derived)
    )


def get_task_metadata(name: str, *, data: DataLike = None, scheme: Scheme = "paper") -> TaskMetadata:
    """One task's metadata, with the control scores of fold scheme `scheme` (old names resolve with a warning)."""
    return resolve_data(data).metadata(name, scheme)


def load_task(name: str, *, data: DataLike = None, scheme: Scheme = "paper") -> Task:
    """Load a task's entities, labels (numpy; multi-hot for multi-label) and fold ids under `scheme`.

    Examples:
        >>> task = load_task("TF vs non-TF")  # doctest: +SKIP
        >>> task.entities.shape, task.labels.shape, task.n_splits  # doctest: +SKIP
        ((2757,), (2757,), 5)
    """
    return resolve_data(data).load_task(name, scheme)


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

    def select(self, data: DataLike, scheme: Scheme = "paper") -> list[TaskMetadata]:
        """The metadata of the selected tasks of `data` (see `resolve_data`), in registry order, with the control
        scores of fold scheme `scheme` (so shortcut flags follow the scheme).

        Raises:
            UnknownTaskError: a task, family, category or type that does not exist.
        """
        opened = resolve_data(data)
        chosen = list_tasks(family=self.family, category=self.category, type=self.type,
                            include_derived=not self.no_derived, data=opened, scheme=scheme)
        if self.tasks:
            wanted = {opened.metadata(name, scheme).name for name in self.tasks}
            chosen = [meta for meta in chosen if meta.name in wanted]
        return list(chosen)


def _check(kind: str, value: str | list[str] | None, known: list[str]) -> set[str] | None:
    if value is None:
        return None
    values = {value} if isinstance(value, str) else set(value)
    for item in values:
        if item not in known:
            listing = f"Known: {', '.join(known)}."
            if kind == "family":
                listing = f"This data holds: {', '.join(known)}; " + _how_to_build(item)
            raise UnknownTaskError(unknown_name_message(kind, item, known, listing=listing))
    return values


def _how_to_build(family: str) -> str:
    """How to get a family this data lacks: build it, when genebench has a builder for it."""
    from genebench.builders import FAMILIES

    if family in FAMILIES:
        return f"build it with `genebench build --out DIR --family {family}` and pass --data DIR."
    return f"genebench builds these families: {', '.join(FAMILIES)}."
