"""Fitting the controls of `genebench.controls.table` on tasks: each control's held-out predictions, or for a seeded
control its scores over seeds.

A seeded control (random vectors) knows nothing of the labels, so its mean differs from chance by seed noise only; on
a task with few positives one seed's score spreads by up to 0.1. Seeds are therefore added to such a task until the
mean is precise (`random_seeds_left`): a task scored with n seeds gets seeds n..n+4 next (every task starts with
`RANDOM_SEEDS`), while the standard error of its mean (sample standard deviation over seeds / sqrt(n)) is above
`RANDOM_MAX_SE` and n is below `RANDOM_MAX_SEEDS`. A derived task topped up without its parent is fitted alone, as a
binary task with its parent's folds (the parent's fit gives each label its own probe: the same score up to the
solver's tolerance).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from tqdm.auto import tqdm

from genebench.controls.table import CONTROLS, RANDOM_MAX_SE, RANDOM_MAX_SEEDS, RANDOM_SEEDS, Control
from genebench.probe.engine import TaskScores
from genebench.tasks.task import Task
from genebench.tasks.types import task_type

if TYPE_CHECKING:
    from genebench.data import BenchmarkData
    from genebench.probe.settings import ProbeSettings


@dataclass(frozen=True)
class SeedScores:
    """A control's main scores over seeds on one task: how many, their mean and their spread (std, ddof=0)."""

    n: int = 0
    mean: float = 0.0
    spread: float = 0.0

    def add(self, score: float) -> SeedScores:
        """These scores and one more (Welford's update).

        Examples:
            >>> SeedScores().add(0.4).add(0.6)
            SeedScores(n=2, mean=0.5, spread=0.09999999999999998)
        """
        n = self.n + 1
        mean = self.mean + (score - self.mean) / n
        squares = self.spread ** 2 * self.n + (score - self.mean) * (score - mean)
        return SeedScores(n, mean, float(np.sqrt(squares / n)))

    @property
    def standard_error(self) -> float:
        """The standard error of the mean: sample standard deviation / sqrt(n); infinite below 2 seeds."""
        return self.spread / (self.n - 1) ** 0.5 if self.n > 1 else float("inf")


def control_settings(control: Control, settings: ProbeSettings) -> ProbeSettings:
    """The probe settings `control` is fitted with: `settings`, with the control's own tolerance."""
    return settings if control.tol is None else dataclasses.replace(settings, tol=control.tol)


def fit_controls(data: BenchmarkData, tasks: Sequence[Task], base: ProbeSettings, *,
                 names: Sequence[str] = tuple(CONTROLS), scored: Mapping[tuple[str, str], SeedScores] | None = None,
                 progress: bool = True) -> Iterator[tuple[str, int, TaskScores]]:
    """Fit controls on `tasks`, yielding (control name, seed, task scores with held-out predictions) per task.

    Args:
        data: the data the tasks come from (its HGNC table and partner recipes).
        tasks: the tasks, with the folds of one scheme.
        base: the probe settings every control is fitted with (with its own tolerance, `control_settings`).
        names: which controls (default all of `CONTROLS`).
        scored: (task name, control) -> a seeded control's seeds scored already (stored); a task gets only the seeds
            `random_seeds_left` asks for after them (default none: every task starts at seed 0). The other controls
            are deterministic: seed 0.
        progress: show a progress bar per control.

    Raises:
        GenebenchError: an unknown control name.
    """
    chosen = [CONTROLS[name] for name in names]  # an unknown name fails here, with suggestions
    for control in chosen:
        applicable = [task for task in tasks if control.applies(task.metadata)]
        if not applicable:
            continue
        settings = control_settings(control, base)
        if control.seeded:
            done = {task: seeds for (task, name), seeds in (scored or {}).items() if name == control.name}
            yield from _fit_seeded(control, data, applicable, settings, done, progress)
        else:
            yield from _fit_once(control, data, applicable, settings, 0, progress)


def _fit_once(control: Control, data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings, seed: int,
              progress: bool) -> Iterator[tuple[str, int, TaskScores]]:
    scored = CONTROLS.load(control.name)(data, tasks, settings, seed)
    for scores in tqdm(scored, total=len(tasks), desc=f"control {control.name} {seed}", unit="task",
                       disable=not progress):
        yield control.name, seed, scores


def _fit_seeded(control: Control, data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings,
                scored: Mapping[str, SeedScores], progress: bool) -> Iterator[tuple[str, int, TaskScores]]:
    """Rounds of `len(RANDOM_SEEDS)` seeds: the tasks at n seeds get seeds n..n+4, while `random_seeds_left`."""
    state = {task.name: scored.get(task.name, SeedScores()) for task in tasks}
    unscorable: set[str] = set()
    while pending := [task for task in tasks if task.name not in unscorable and random_seeds_left(state[task.name])]:
        first = min(state[task.name].n for task in pending)
        group = [task for task in pending if state[task.name].n == first]
        for seed in range(first, first + len(RANDOM_SEEDS)):
            for _, _, result in _fit_once(control, data, group, settings, seed, progress):
                if result.scores:
                    state[result.task.name] = state[result.task.name].add(result.scores[result.main_score].mean)
                else:
                    unscorable.add(result.task.name)
                yield control.name, seed, result


def random_seeds_left(scores: SeedScores) -> bool:
    """Whether a task's random control, scored so far `scores`, gets more seeds: while the standard error of their
    mean is above `RANDOM_MAX_SE` and fewer than `RANDOM_MAX_SEEDS` were scored.

    Examples:
        >>> random_seeds_left(SeedScores(5, 0.5, 0.01)), random_seeds_left(SeedScores(5, 0.5, 0.05))
        (False, True)
    """
    return scores.n < RANDOM_MAX_SEEDS and scores.standard_error > RANDOM_MAX_SE


def control_scores(data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings) -> dict[str, dict[str, float]]:
    """Each control refitted on `tasks` as given (e.g. restricted to the rows a model covers): task name -> control
    name -> main score (random: the mean over its seeds). Tasks a control cannot score are left out of its entries.
    `covered_control_scores` gives the same lift from stored predictions without refitting."""
    per_seed: dict[tuple[str, str], list[float]] = {}
    for name, _, result in fit_controls(data, tasks, settings, progress=False):
        if result.scores:
            per_seed.setdefault((result.task.name, name), []).append(result.scores[result.main_score].mean)
    scores: dict[str, dict[str, float]] = {}
    for (task, name), values in per_seed.items():
        scores.setdefault(task, {})[name] = float(np.mean(values))
    return scores


def held_out_values(task: Task, scores: TaskScores) -> np.ndarray:
    """A fit's held-out probabilities as stored predictions: shape (n_rows, n_columns) float32 over every row of the
    task (NaN where it has none), logits for binary and multi-label columns, log-probabilities for categorical
    classes (a softmax's per-class ranking is that of its log-probabilities, not of its logits).

    Examples:
        >>> from genebench.results import Coverage
        >>> from genebench.tasks.metadata import TaskMetadata
        >>> task = Task(TaskMetadata(name="t", category="localization", type="binary", family="f", source_url="",
        ...             source_version="", license="", citation=""), np.array(["A", "B"]), np.array([0, 1]),
        ...             np.array([0, 1]))
        >>> held_out_values(task, TaskScores(task, "roc_auc", Coverage(n_covered=1, n_task=2, fraction=.5),
        ...                 held_out=np.array([0.5]), rows=np.array([1]))).ravel().tolist()
        [nan, 0.0]
    """
    proba = np.asarray(scores.held_out, dtype=np.float64)
    proba = proba.reshape(len(proba), -1)
    values = task_type(task.metadata.type).ranking_values(proba)
    out = np.full((len(task.fold_ids), proba.shape[1]), np.nan, dtype=np.float32)
    out[scores.rows] = values
    return out
