"""Which runs can be ranked together: the data revision id, task counts, coverage and completeness.

A run is ranked only when it holds every task of its data revision, and only against complete runs of the same
revision (the one most complete runs share). Partial runs, and complete runs of another revision, are shown
apart, unranked, with a note saying why. `report`, `compare` and the leaderboard all decide through
`standings`, so a 2-task run can never outrank a full one anywhere.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

COMPLETE = "complete"
PARTIAL = "partial"
OTHER_DATA = "other data revision"


def data_hash_of(provenance: Mapping[str, Any]) -> str:
    """The data hash a provenance record names (`BenchmarkData.provenance`): the id of the built data, as `run`,
    `build`, the card and the leaderboard show; "unknown" when it names none.

    Examples:
        >>> data_hash_of({"data_hash": "593ea0e6529cc0b7", "sources": {}})
        '593ea0e6529cc0b7'
    """
    return str(provenance.get("data_hash") or "unknown")


def data_task_count(provenance: Mapping[str, Any]) -> int | None:
    """How many tasks the full benchmark of this revision holds: as recorded with the results, else from the
    default data (the bundled snapshot) when it is that revision, else None."""
    if provenance.get("n_tasks"):
        return int(provenance["n_tasks"])
    default = _default_provenance()
    return default["n_tasks"] if default and default["data_hash"] == provenance.get("data_hash") else None


@functools.cache
def _default_provenance() -> dict[str, Any] | None:
    from genebench.data import open_data
    from genebench.errors import GenebenchError

    try:
        return open_data().provenance
    except GenebenchError:
        return None


@dataclass(frozen=True)
class Standing:
    """Where one run stands: its size, coverage, completeness and rank (None when unranked)."""

    run: str
    data_hash: str
    n_tasks: int
    n_expected: int
    expected_known: bool
    coverage: float
    mean: float
    status: str
    rank: int | None
    data_hash_ranked: str = ""

    @property
    def tasks_label(self) -> str:
        """ "132 of 132", or "2 of 132"."""
        return f"{self.n_tasks} of {self.n_expected}"

    @property
    def note(self) -> str:
        """Why a run is unranked ("" for a ranked one)."""
        if self.status == PARTIAL:
            return f"partial: {self.tasks_label} tasks, not ranked"
        if self.status == OTHER_DATA:
            return f"data revision {self.data_hash}, not ranked against {self.data_hash_ranked}"
        return ""


def standings(frame: pd.DataFrame) -> list[Standing]:
    """Rank runs: only complete runs of one data revision, by mean main score over their tasks.

    Args:
        frame: one row per (run, task) with columns `run`, `data_hash` (the data's id), `data_tasks` (the data's
            task count, NaN when unknown), `task`, `mean` (main score, NaN when skipped), `coverage` and optionally
            `vote` (a derived task's parent: the mean ranked by is over votes, as every summary's,
            `genebench.results.summarised_rows`).

    Returns:
        One `Standing` per run: ranked runs first by rank, then the others by mean score. Where a revision's
        task count is unknown, the tasks its runs hold together stand for its full task set.
    """
    if frame.empty:
        return []
    per_data = frame.groupby("data_hash").agg(known=("data_tasks", "max"), seen=("task", "nunique"))
    runs = frame.groupby("run", sort=False).agg(
        data_hash=("data_hash", "first"), n_tasks=("task", "nunique"), coverage=("coverage", "mean"),
        mean=("mean", "mean"))
    votes = frame.assign(vote=frame["vote"] if "vote" in frame else frame["task"])
    runs["mean"] = votes.groupby(["run", "vote"], sort=False)["mean"].mean().groupby(level="run", sort=False).mean()
    known = per_data["known"].reindex(runs["data_hash"]).to_numpy()
    seen = per_data["seen"].reindex(runs["data_hash"]).to_numpy()
    runs["expected_known"] = np.isfinite(known.astype(float))
    runs["n_expected"] = np.where(runs["expected_known"], np.nan_to_num(known.astype(float)), seen).astype(int)
    runs["complete"] = runs["n_tasks"] >= runs["n_expected"]
    counts = runs[runs["complete"]].groupby("data_hash").size()
    ranked_hash = (max(counts.index, key=lambda rev: (counts[rev], rev)) if len(counts) else "")
    runs["status"] = np.where(~runs["complete"], PARTIAL,
                              np.where(runs["data_hash"] == ranked_hash, COMPLETE, OTHER_DATA))
    ranked = runs[runs["status"] == COMPLETE].sort_values("mean", ascending=False, kind="stable")
    ranks = {run: i + 1 for i, run in enumerate(ranked.index)}
    others = runs[runs["status"] != COMPLETE].sort_values("mean", ascending=False, kind="stable")
    return [
        Standing(run=str(run), data_hash=str(row["data_hash"]), n_tasks=int(row["n_tasks"]),
                 n_expected=int(row["n_expected"]), expected_known=bool(row["expected_known"]),
                 coverage=float(row["coverage"]), mean=float(row["mean"]), status=str(row["status"]),
                 rank=ranks.get(run), data_hash_ranked=ranked_hash)
        for run, row in pd.concat([ranked, others]).iterrows()
    ]
