"""The paper's published models on the leaderboard: their own labelled group, beside the runs, never ranked with them.

`genebench.leaderboard.site.leaderboard_data` adds `published_entries` to the page's data: one entry per paper
model (section "published", never ranked: the comparability rules rank genebench runs of one data revision only,
and these are of the paper's own), each one's per-task cells on the page's mapped tasks (the paper's mean, the sd
of its 5 folds and the task's relation mark), and the frames its summary cells are averaged from.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import pandas as pd

from genebench import published

NOTE = "as published: the paper's data releases and protocol; never ranked with genebench runs"


def published_entries(tasks: Mapping[str, str], sources: Mapping[str, Any] | None = None,
                      probe: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The published models' page entries, restricted to `tasks` (the page's task names).

    Args:
        tasks: the page's tasks, name -> category (a published score is summarised under the page's category).
        sources, probe: a listed run's data sources and probe settings, which each task's relation mark is for
            (`published.run_relation`); None: the mapping's own relation.

    Returns:
        label (`published.GROUP`), models (page entries), modalities, cells (model key -> task -> {"own": cell})
        and frames (model key -> its scores as `results_frame` rows on `tasks`, for the summary cells).
    """
    scores = published.fold_scores()
    scores = scores[scores["task"].isin(set(tasks))]
    info = published.models().set_index("model")
    frame = _summarised()
    entries, cells, frames = [], {}, {}
    for model, rows in scores.groupby("model", sort=False):
        row = info.loc[model]
        key = published.model_id(row["slug"])
        entries.append({
            "key": key, "id": f"{model} (as published)", "revision": published.COMMIT, "scheme": "paper",
            "section": "published", "input": row["input"], "modality": row["input"], "license": published.LICENSE,
            "reference": published.PAPER_URL, "n_parameters": None, "size": "unknown", "size_label": "unknown",
            "data_hash": published.DATA_HASH, "n_tasks": int(len(rows)), "n_expected": int(len(rows)),
            "coverage": None, "coverage_text": "not published", "ranked": False, "note": NOTE,
            "meta_href": f"{published.REPOSITORY}/tree/{published.COMMIT}", "results_href": published.PAPER_URL,
            "description": row["modality"]})
        cells[key] = {r.task: {"own": [_text(r, sources, probe), float(r.mean)]} for r in rows.itertuples()}
        mine = frame[(frame["model"] == key) & frame["task"].isin(set(tasks))]
        frames[key] = mine.assign(category=mine["task"].map(dict(tasks)))
    return {"label": published.GROUP, "models": entries, "cells": cells, "frames": frames,
            "modalities": sorted({entry["modality"] for entry in entries})}


@functools.cache
def _summarised() -> pd.DataFrame:
    """Every published result as `summarised_rows` of its results table (the leaderboard's summary rows)."""
    from genebench.results import results_frame, summarised_rows

    return summarised_rows(results_frame(published.published_results()))


def _text(row: Any, sources: Mapping[str, Any] | None, probe: Mapping[str, Any] | None) -> str:
    """ "0.857 ± 0.002 =": the paper's mean, the sd of its folds and the relation mark for the page's runs."""
    relation = row.relation if sources is None else published.run_relation(row.relation, row.paper_source, sources,
                                                                           probe or {})
    return f"{row.mean:.3f} \u00b1 {row.sd:.3f} {published.MARKS[relation]}"

