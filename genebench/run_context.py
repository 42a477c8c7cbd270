"""What the tasks of one fold scheme's run share (`RunContext`), and the scores a run's later schemes take from its
first (`SharedScores`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from genebench.embeddings import GeneEmbeddings
from genebench.probe.settings import ProbeSettings
from genebench.progress import Timer
from genebench.results import OverwriteStrategy
from genebench.tasks.task import Task

if TYPE_CHECKING:
    from genebench.data import BenchmarkData
    from genebench.distributed import RayEngine
    from genebench.probe.engine import TaskScores


@dataclass
class SharedScores:
    """Probe scores that a run's later fold schemes take from its first: those of `names`, the tasks probed the
    same under every scheme (`shared_tasks`), so probed once."""

    names: set[str]
    scores: dict[str, TaskScores] = field(default_factory=dict)

    def keep(self, scores: TaskScores) -> None:
        """Hold a shared task's scores for the schemes after this one."""
        if scores.task.name in self.names:
            self.scores[scores.task.name] = scores

    def take(self, task: Task) -> TaskScores | None:
        """The held scores of `task`, filed under this scheme's task (its controls and family report), or None."""
        found = self.scores.get(task.name)
        return None if found is None else replace(found, task=task)


def shared_tasks(tasks: dict[str, list[Task]]) -> set[str]:
    """The tasks a run probes the same under each of its schemes (`tasks` by scheme): the same rows, labels and
    folds (pair and train-test tasks keep their split under family folds), scorable under every scheme, and
    neither a derived task nor a parent (those are probed as one unit)."""
    by_name = [{task.name: task for task in scheme} for scheme in tasks.values()]
    related = {parent for scheme in tasks.values() for task in scheme if (parent := task.metadata.parent)}
    shared = set()
    for name in set.intersection(*(set(scheme) for scheme in by_name)) - related:
        first, *others = (scheme[name] for scheme in by_name)
        if first.metadata.parent or any(task.metadata.family_unscorable for task in (first, *others)):
            continue
        if all(np.array_equal(getattr(first, part), getattr(other, part)) for other in others
               for part in ("entities", "labels", "fold_ids")):
            shared.add(name)
    return shared


@dataclass
class RunContext:
    """What every task of one fold scheme's run shares.

    Attributes:
        provenance: source versions and the built data's hash.
        settings: probe settings; their `folds` are the scheme the tasks were loaded with.
        config: the run configuration, recorded with every result (`RunConfig.record()`).
        overwrite: "only-missing" (default), "always" or "never" (see `OverwriteStrategy`).
        progress: show progress (a bar on a terminal, a line a minute elsewhere; see `genebench.progress`).
        partner_embeddings: vectors for non-gene entities of pair tasks.
        engine: where the probes run: None here, a unit per core; a `RayEngine` on its cluster. Scores are the
            same either way; results are finished on a pool here and written by this thread alone.
        data: the tasks' data; given, the lift on a task the model covers in part is over the controls on its
            covered rows (`controls_on`), and under family folds each result holds what the model adds over the
            name control (`genebench.controls.added`); else over the stored controls.
        timer: where the seconds of the probe, controls (summed over threads) and write phases add up.
        shared: scores another scheme of the run already probed, taken instead of probing again; the shared
            tasks a run probes are added to it.
    """

    provenance: dict[str, Any]
    settings: ProbeSettings = field(default_factory=ProbeSettings)
    config: dict[str, Any] = field(default_factory=dict)
    overwrite: OverwriteStrategy | str = OverwriteStrategy.ONLY_MISSING
    progress: bool = True
    partner_embeddings: GeneEmbeddings | None = None
    engine: RayEngine | None = None
    data: BenchmarkData | None = None
    timer: Timer = field(default_factory=Timer)
    shared: SharedScores | None = None
