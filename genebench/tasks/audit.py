"""Tasks worth averaging: keyword labels checked against independent sets, and near-identical tasks merged.

**Incomplete labels.** A UniProt keyword is a curated annotation, and the bundled release annotates some keywords
on only a fraction of the genes they describe. Each audited label (`KEYWORD_AUDITS`) is measured against an
independent set built from another family's source in the same data folder: HPA's subcellular locations for
"Nucleus" and "Cell membrane", HumanTFs' transcription factors for "DNA-binding", "Transcription" and
"Transcription regulation". Of the independent set's genes that the keyword task holds, the share that carries the
keyword is its coverage; under `MIN_COVERAGE` the label is incomplete. A label with its own derived task marks that
task (`TaskMetadata.incomplete`); a label below the derived-task prevalence, or dropped below the minimum class
size, is listed in its parent's `incomplete_labels`; a parent whose audited labels are all incomplete and hold at
least half of its positives is incomplete itself. Incomplete tasks are kept out of summaries by default.

**Near-identical tasks.** Derived tasks of one parent whose gene sets overlap with Jaccard >= `MERGE_JACCARD`
("Molecular function;G-protein coupled receptor" and "Molecular function;Transducer": the same genes) would count
one question twice in every mean; they are merged into one task, the other name kept as an alias.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from genebench.tasks.metadata import TaskMetadata
from genebench.tasks.types import task_type

if TYPE_CHECKING:
    from genebench.data import BenchmarkData

MIN_COVERAGE = 0.5
"""A keyword whose positives cover less than this share of its independent set is incomplete."""
MERGE_JACCARD = 0.99
"""Derived tasks of one parent whose positive sets overlap at least this much (Jaccard) are merged."""


@dataclass(frozen=True)
class KeywordAudit:
    """One keyword label and the independent set it is measured against.

    Attributes:
        task: the keyword task (a multi-label parent).
        label: the keyword.
        reference_task: the task of another family whose labels give the independent set.
        reference_labels: its labels whose genes form the set.
        reference: the set in words, for the figures.
    """

    task: str
    label: str
    reference_task: str
    reference_labels: tuple[str, ...]
    reference: str


_NUCLEAR = ("Nuclear bodies", "Nuclear membrane", "Nuclear speckles", "Nucleoli", "Nucleoli fibrillar center",
            "Nucleoplasm", "Nucleus")
_TFS = ("TF vs non-TF", ("TF",), "HumanTFs transcription factors")
KEYWORD_AUDITS: tuple[KeywordAudit, ...] = (
    KeywordAudit("UniProt keyword Cellular component", "Nucleus", "Subcellular location", _NUCLEAR,
                 "HPA nuclear locations"),
    KeywordAudit("UniProt keyword Cellular component", "Cell membrane", "Subcellular location", ("Plasma membrane",),
                 "HPA plasma membrane"),
    KeywordAudit("UniProt keyword Molecular function", "DNA-binding", *_TFS),
    KeywordAudit("UniProt keyword Biological process", "Transcription", *_TFS),
    KeywordAudit("UniProt keyword Biological process", "Transcription regulation", *_TFS),
)
"""The audited keyword labels (issue #22: "Nucleus", "Cell membrane", "DNA-binding", "Transcription")."""


def audit_keywords(data: BenchmarkData) -> dict[str, dict[str, str]]:
    """Measure each audited keyword against its independent set: task name -> {label: why it is incomplete}.

    Only incomplete labels are listed. Audits whose keyword task or reference task the folder lacks are skipped, and
    so are those of a label the task left out at build (`TaskMetadata.dropped_labels`, e.g. a parent keyword).

    Args:
        data: a built data folder holding the keyword family and the reference families.
    """
    names = {meta.name for meta in data.tasks()}
    found: dict[str, dict[str, str]] = {}
    for audit in KEYWORD_AUDITS:
        if audit.task not in names or audit.reference_task not in names:
            continue
        if audit.label in data.metadata(audit.task).dropped_labels:  # left out at build, with its reason
            continue
        task, reference = data.load_task(audit.task), data.load_task(audit.reference_task)
        labels = task_type(reference.metadata.type).class_matrix(reference.labels,
                                                                 len(reference.metadata.label_names))
        columns = [i for i, name in enumerate(reference.metadata.label_names) if name in audit.reference_labels]
        independent = set(map(str, reference.entities[labels[:, columns].any(axis=1)]))
        held = independent & set(map(str, task.entities))
        names_in_task = list(task.metadata.label_names)
        if audit.label in names_in_task:
            positives = set(map(str, task.entities[task.labels[:, names_in_task.index(audit.label)] == 1]))
            count = f"{len(positives)} genes"
        else:
            positives = set()
            count = f"fewer than {task.metadata.min_class_size} genes (below the minimum class size)"
        covered = len(positives & held)
        share = covered / len(held) if held else float("nan")
        if share < MIN_COVERAGE:
            found.setdefault(audit.task, {})[audit.label] = (
                f"'{audit.label}' annotates {count}, covering {covered} of the {len(held)} genes of {audit.reference} "
                f"in this task ({share:.1%} < {MIN_COVERAGE:.0%}): the keyword release is incomplete here")
    return found


def apply_audit(metadata: list[TaskMetadata], incomplete: dict[str, dict[str, str]],
                positives: dict[str, dict[str, int]]) -> list[TaskMetadata]:
    """Mark incomplete tasks and labels in a family's metadata (see the module docstring).

    Args:
        metadata: the family's task metadata, derived tasks included.
        incomplete: `audit_keywords`' findings.
        positives: parent task -> label -> its positive count (to weigh a parent's incomplete labels).
    """
    by_name = {meta.name: meta for meta in metadata}
    out = []
    for meta in metadata:
        update: dict = {"incomplete": None, "incomplete_labels": {}}
        if meta.is_derived and meta.label_names[1] in incomplete.get(meta.parent, {}):
            update["incomplete"] = incomplete[meta.parent][meta.label_names[1]]
        elif meta.name in incomplete:
            labels = incomplete[meta.name]
            own = {f"{meta.name};{label}" for label in labels} & set(by_name)
            update["incomplete_labels"] = {label: reason for label, reason in labels.items()
                                           if f"{meta.name};{label}" not in own}
            counts = positives.get(meta.name, {})
            share = sum(counts.get(label, 0) for label in labels) / max(sum(counts.values()), 1)
            if share >= 0.5:
                update["incomplete"] = (f"its audited labels are incomplete and hold {share:.0%} of its positives: "
                                        + "; ".join(labels.values()))
        out.append(meta.model_copy(update=update))
    return out


def merge_near_duplicates(derived: list[TaskMetadata], columns: np.ndarray) -> list[TaskMetadata]:
    """Merge derived tasks whose positive sets overlap with Jaccard >= `MERGE_JACCARD` into one task each.

    Of a near-identical pair, the task with more positives is kept (ties: the first in label order) and gains the
    other's name as an alias; the other is dropped.

    Args:
        derived: one parent's derived tasks, in label order.
        columns: shape (n_rows, len(derived)), their labels (multi-hot columns of the parent).

    Examples:
        >>> from genebench.tasks.metadata import TaskMetadata
        >>> def meta(label):
        ...     return TaskMetadata(name=f"P;{label}", category="localization", type="derived binary", family="f",
        ...                         parent="P", source_url="", source_version="", license="", citation="")
        >>> merged = merge_near_duplicates([meta("A"), meta("B")], np.array([[1, 1], [0, 0], [1, 1]]))
        >>> [(m.name, m.aliases) for m in merged]
        [('P;A', ('P;B',))]
    """
    hot = np.asarray(columns, dtype=bool)
    sizes = hot.sum(axis=0)
    keep = list(range(len(derived)))
    aliases: dict[int, list[str]] = {i: list(derived[i].aliases) for i in keep}
    for i in range(len(derived)):
        for j in range(i + 1, len(derived)):
            if i not in keep or j not in keep:
                continue
            union = int((hot[:, i] | hot[:, j]).sum())
            if union and (hot[:, i] & hot[:, j]).sum() / union >= MERGE_JACCARD:
                kept, dropped = (i, j) if sizes[i] >= sizes[j] else (j, i)
                keep.remove(dropped)
                aliases[kept] += [derived[dropped].name, *aliases[dropped]]
    return [derived[i].model_copy(update={"aliases": tuple(aliases[i])}) for i in keep]
