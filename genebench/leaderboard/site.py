"""The leaderboard page: one static HTML file plus assets, from validated runs.

The page embeds its data as JSON in a `<script type="application/json">` block (with `<`, `>` and `&` escaped)
and renders it with DOM text nodes, so nothing from a submission is ever interpreted as HTML. It works from
file:// and as a static Hugging Face Space (the README.md written beside it carries the Space YAML).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd

from genebench.atomic import write_atomic
from genebench.comparability import Standing, data_hash_of, data_task_count, standings
from genebench.leaderboard.figures import FigureError, clean_figure
from genebench.leaderboard.validate import MAX_FILE_BYTES, ModelRun, check_safe_name
from genebench.report import names_only_note, plain_text, task_cell, understanding_left_out, understanding_rows
from genebench.results import (
    added_summary,
    format_added,
    format_lift,
    results_frame,
    score_cell,
    summarised_rows,
    vote_means,
)
from genebench.tasks.metadata import CATEGORIES, SHORTCUT_AUC, TASK_TYPES, format_control

logger = logging.getLogger(__name__)

ASSETS_DIR = Path(__file__).parent / "assets"
SIZE_BUCKETS: tuple[tuple[str, str, float], ...] = (
    ("small", "< 100M", 1e8),
    ("medium", "100M \u2013 1B", 1e9),
    ("large", "\u2265 1B", float("inf")),
)
"""(key, label, exclusive upper bound on n_parameters); models without a size are 'unknown'."""
FIGURE_SUFFIXES = (".png", ".svg")
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}

SPACE_README = """\
---
title: genebench leaderboard
emoji: 🧬
colorFrom: green
colorTo: blue
sdk: static
app_file: index.html
pinned: false
---

# genebench leaderboard

Models scored by genebench's linear probes on curated gene properties (ROC AUC, mean ± std over tasks).
Built with `genebench leaderboard build`; per-model metadata and results are under `models/`.
"""


def embed_json(value: Any) -> str:
    """Serialise `value` for a `<script type="application/json">` block: no `<`, `>` or `&` survives.

    >>> embed_json({"name": "</script>"})
    '{"name": "\\\\u003c/script\\\\u003e"}'
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return "".join(_JSON_ESCAPES.get(char, char) for char in text)


def size_bucket(n_parameters: int | None) -> tuple[str, str]:
    """(key, label) of the model-size filter bucket for `n_parameters`.

    >>> size_bucket(22_700_000)
    ('small', '< 100M')
    """
    if n_parameters is None:
        return "unknown", "unknown"
    return next((key, label) for key, label, bound in SIZE_BUCKETS if n_parameters < bound)


def run_standings(runs: Sequence[ModelRun]) -> dict[str, Standing]:
    """Each run's task count, coverage, completeness and rank, by run key (see `genebench.comparability`)."""
    rows = [
        {
            "run": run.key,
            "data_hash": data_hash_of(run.provenance),
            "data_tasks": data_task_count(run.provenance),
            "task": result.task.name,
            "vote": result.task.parent or result.task.name,
            "mean": result.scores[result.main_score].mean if result.skipped is None else float("nan"),
            "coverage": result.coverage.fraction,
        }
        for run in runs
        for result in run.results
    ]
    frame = pd.DataFrame(rows, columns=["run", "data_hash", "data_tasks", "task", "vote", "mean", "coverage"])
    frame = frame.astype({"data_tasks": "float64", "mean": "float64", "coverage": "float64"})
    return {standing.run: standing for standing in standings(frame)}


def score_frame(runs: Sequence[ModelRun]) -> pd.DataFrame:
    """One row per scored (run, task): columns run, model, category, type, task, vote (a derived task's parent, else
    the task: see `genebench.results.summarised_rows`), mean, std (main score) and control (the best control's
    score on the task's rows the model covers, NaN without)."""
    rows = [
        {
            "run": run.key,
            "model": f"{run.model.id}@{run.model.revision}",
            "category": result.task.category,
            "type": result.task.type,
            "task": result.task.name,
            "vote": result.task.parent or result.task.name,
            "mean": result.scores[result.main_score].mean,
            "std": result.scores[result.main_score].std,
            "control": result.best_control[1] if result.best_control else float("nan"),
        }
        for run in runs
        for result in run.results
        if result.skipped is None and getattr(result.task, "incomplete", None) is None
    ]
    frame = pd.DataFrame(rows, columns=["run", "model", "category", "type", "task", "vote", "mean", "std", "control"])
    return frame.astype({"mean": "float64", "std": "float64"})  # an empty frame's columns would be Arrow strings


def pair_schemes(runs: Sequence[ModelRun]) -> tuple[list[ModelRun], dict[str, ModelRun]]:
    """The runs the page lists (paper folds, or family folds for a model without a paper-fold run: a family-only
    run, listed in a section of its own) and, by listed run key, the family-fold run of the same model and revision
    shown beside it."""
    paper = {run.key for run in runs if run.scheme == "paper"}
    listed = [run for run in runs if run.scheme == "paper" or run.key not in paper]
    beside = {run.key: run for run in runs if run.scheme == "family" and run.key in paper}
    return listed, beside


def view_keys(tasks: Sequence[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Every view the page's task filters can select: (category, type, "1" when shortcut-solvable tasks are left
    out), "" for no filter."""
    categories = ["", *dict.fromkeys(task["category"] for task in tasks)]
    types = ["", *dict.fromkeys(task["type"] for task in tasks)]
    return [(category, task_type, flagged) for category in categories for task_type in types for flagged in ("", "1")]


def _cell(text: str, value: float | None) -> list[Any]:
    """A shown cell: its text (from `genebench.results`' formatters) and the value it sorts by (None: none)."""
    return [text, _finite(value)]


def _vote_cell(rows: pd.DataFrame, value: str = "mean") -> list[Any]:
    """The one-vote-per-parent mean of `rows[value]` (`vote_means`) as a cell: "mean ± std" for the AUC, the signed
    mean for a lift; "–" over no task."""
    rows = rows[rows[value].notna()]
    if rows.empty:
        return _cell("\u2013", None)
    means = vote_means(rows.assign(key=0), ["key"], (value,)).iloc[0]
    if value == "mean":
        return _cell(score_cell(means["mean"], means["mean_std"], int(means["n_votes"])), means["mean"])
    return _cell(format_lift(means[value]), means[value])


def summary_cells(paper: pd.DataFrame | None, family: pd.DataFrame | None, view_tasks: set[str],
                  expected: int) -> dict[str, list[Any]]:
    """One run's summary cells over the tasks of one view (`summarised_rows` of each scheme's results, None where
    the run has no such scheme): AUC and lift under paper folds, AUC, lift and Understanding under family folds,
    task counts per scheme and each category's AUC under the run's own (listed) scheme."""
    own = paper if paper is not None else family
    own = own[own["task"].isin(view_tasks)]
    cells = {"overall": _vote_cell(own), "lift": _vote_cell(own, "lift"),
             "tasks": _cell(f"{own['task'].nunique()} of {expected}", own["task"].nunique())}
    for category, rows in own.groupby("category", sort=False):
        cells[f"cat:{category}"] = _vote_cell(rows)
    if paper is not None and family is not None:
        rows = family[family["task"].isin(view_tasks)]
        cells |= {"family": _vote_cell(rows), "familyLift": _vote_cell(rows, "lift"),
                  "familyTasks": _cell(str(rows["task"].nunique()), rows["task"].nunique())}
    if family is not None:
        kept = understanding_rows(family[family["task"].isin(view_tasks)])
        mean, low, high = added_summary(kept)
        cells["understanding"] = _cell(format_added(mean, low, high), mean)
        column = "familyTasks" if paper is not None else "tasks"
        cells[column][0] += f" ({kept['task'].nunique()} in Understanding)"
    return cells


def task_cells(run: ModelRun, family: ModelRun | None) -> dict[str, dict[str, list[Any]]]:
    """Per task, the cells the task tables show for one listed run: its own scheme's score ("mean ± std (lift)",
    "mean (lift)" with one split, the metric named when it is not ROC AUC) and, with family folds, the family-fold
    AUC with its lift and added over names with its interval, each formatted from the stored result."""
    cells: dict[str, dict[str, list[Any]]] = {}
    for result in run.results:
        cells[result.task.name] = {"own": _score_cell(result)}
    for result in family.results if family is not None and family is not run else ():
        cells.setdefault(result.task.name, {})["family"] = _score_cell(result)
    for result in family.results if family is not None else ():
        added = result.added_over_names
        value = None if added is None else added.value
        cells.setdefault(result.task.name, {})["added"] = _cell(
            "\u2013" if value is None else format_added(value, added.low, added.high), value)
    return cells


def _score_cell(result: Any) -> list[Any]:
    if result.skipped is not None:
        return _cell("\u2013", None)
    score = result.scores[result.main_score]
    lift = float("nan") if result.lift is None else result.lift
    return _cell(task_cell(score.mean, score.std, len(score.folds), lift, result.main_score), score.mean)


def _finite(value: Any) -> float | None:
    return None if value is None or value != value else float(value)


@plain_text
def plot_category_heatmap(frame: pd.DataFrame, path: Path, *, scheme: str = "paper") -> Path:
    """Draw models × categories mean AUC (over tasks) as a PNG at `path` (`genebench.report.category_heatmap`),
    rows in the frame's model order, with the best control's mean over the first model's tasks as a last, hatched
    row."""
    from genebench.report import category_grid, category_heatmap, save_figure

    means, _, counts = category_grid(frame, "model")
    first = frame[frame["model"] == frame["model"].iat[0]].assign(model="best control")
    controls = category_grid(first, "model", "control")[0].reindex(columns=means.columns)
    return save_figure(category_heatmap(means, counts, list(means.index), controls=controls, scheme=scheme), path,
                       formats=("png",))[0]


def find_figures(dirs: Iterable[Path]) -> list[Path]:
    """Report figures under `dirs`, one per chart: its PNG where there is one, else its SVG (regular files within
    the size limit, PNGs by their magic bytes)."""
    found = []
    for root in dirs:
        paths = sorted(Path(root).rglob("*"))
        pngs = {p.with_suffix("") for p in paths if p.suffix.lower() == ".png"}
        for path in paths:
            if path.suffix.lower() not in FIGURE_SUFFIXES or path.is_symlink() or not path.is_file():
                continue
            if path.suffix.lower() == ".svg" and path.with_suffix("") in pngs:
                continue
            if path.stat().st_size > MAX_FILE_BYTES:
                logger.warning("Skipping figure %s: over %d bytes.", path, MAX_FILE_BYTES)
            elif path.suffix.lower() == ".png" and path.read_bytes()[:8] != _PNG_MAGIC:
                logger.warning("Skipping figure %s: not a PNG file.", path)
            else:
                found.append(path)
    return found


def figure_caption(path: Path) -> str:
    """A figure's caption: its name, after the results folder it came from (`run` writes `<out>/figures/`).

    >>> figure_caption(Path("results-minilm/figures/categories.png"))
    'results-minilm: categories'
    """
    name = path.stem.replace("_", " ")
    return f"{path.parent.parent.name}: {name}" if path.parent.name == "figures" and path.parent.parent.name else name


def _href(*parts: str) -> str:
    return "/".join(quote(part, safe="") for part in parts)


def _task_entries(listed: Sequence[ModelRun], runs: Sequence[ModelRun]) -> dict[str, dict[str, Any]]:
    """`leaderboard_data`'s tasks, by name: each listed run's tasks, shortcut-solvable when a control solves them
    under either scheme."""
    tasks: dict[str, dict[str, Any]] = {}
    for run in listed:
        for result in run.results:
            pairs = "pair" in result.task.type
            tasks.setdefault(
                result.task.name,
                {
                    "name": result.task.name,
                    "category": result.task.category,
                    "type": result.task.type,
                    "parent": result.task.parent,
                    "n_entities": result.task.n_entities,
                    "entities": f"{result.task.n_entities} {'pairs' if pairs else 'genes'}",
                    "best_control": format_control(result.task.best_control),
                    "shortcut": False,
                    "incomplete": getattr(result.task, "incomplete", None),
                },
            )
    for run in runs:  # one rule for both schemes: a task a control solves under either is shortcut-solvable
        for result in run.results:
            if result.task.name in tasks and result.task.is_shortcut_solvable:
                tasks[result.task.name] |= {"shortcut": True, "best_control":
                                            f"{format_control(result.task.best_control)} ({run.scheme} folds)"}
    return tasks


def _model_entry(run: ModelRun, family: ModelRun | None, standing: Standing) -> dict[str, Any]:
    """One listed run's entry in `leaderboard_data`'s models: its record, its standing and its files' links."""
    n_parameters = run.model.n_parameters
    size, size_label = size_bucket(n_parameters)
    return {
        "key": run.key,
        "id": run.model.id,
        "revision": run.model.revision,
        "scheme": run.scheme,
        "section": run.scheme,
        "input": run.model.input,
        "modality": run.model.modality or run.model.input,
        "license": run.model.license,
        "reference": run.model.reference,
        "n_parameters": n_parameters,
        "size": size,
        "size_label": size_label,
        "data_hash": standing.data_hash,
        "n_tasks": standing.n_tasks,
        "n_expected": standing.n_expected,
        "coverage": standing.coverage,
        "coverage_text": f"{standing.coverage:.1%}",
        "ranked": standing.rank is not None,
        "note": standing.note,
        "meta_href": _href("models", run.dir_name, run.model.revision, "model_meta.json"),
        "results_href": _href("models", run.dir_name, run.model.revision, results_file(run)),
        "family_results_href": (_href("models", run.dir_name, run.model.revision, results_file(family))
                                if family is not None else None),
    }


def leaderboard_data(runs: Sequence[ModelRun], figures: Sequence[tuple[str, str]] = (), *,
                     published: bool = True) -> dict[str, Any]:
    """The JSON document the page renders. Every number on the page is a cell here, [text, sort value], its text
    written by `genebench.results`' formatters from the stored results and its means by `vote_means` (one vote per
    multi-label parent), so the page's script formats and averages nothing.

    Keys: tasks (with their parent, best control, shortcut flag and size), models (each with its `section`:
    "paper" for a run under paper folds, shown with its family-fold run beside; "family" for a family-fold run
    without one, shown and ranked apart), views (per filter view `view_keys`, per listed run, `summary_cells`),
    cells (per listed run, per task, `task_cells`), understanding_out (tasks Understanding leaves out, and why),
    names_only (the names-only reference measured on the runs' data, as lines; `names_only_note`) and figures.

    Args:
        runs: Validated runs; a family-fold run of a model that also has a paper-fold run is shown beside it.
        figures: (relative src, caption) pairs.
        published: add the paper's published models on the page's tasks (`genebench.published.leaderboard`): key
            "published" (their label, entries and modalities), their cells in `cells` and their summary cells in
            `views`; never in `models`, never ranked.
    """
    listed, beside = pair_schemes(runs)
    tasks = _task_entries(listed, runs)
    families = {run.key: beside.get(run.key, run if run.scheme == "family" else None) for run in listed}
    frames = {run.key: summarised_rows(results_frame(run.results)) for run in listed}
    family_frames = {key: summarised_rows(results_frame(run.results)) if run is not None else None
                     for key, run in families.items()}
    standing = run_standings(listed)
    models = [_model_entry(run, families[run.key], standing[run.key]) for run in listed]
    ordered = sorted(tasks.values(), key=lambda task: (CATEGORIES.index(task["category"]), task["name"]))
    field = _published_field({task["name"]: task["category"] for task in ordered}, listed) if published else None
    views = {}
    for category, task_type, flagged in view_keys(ordered):
        shown = {t["name"] for t in ordered if not t["incomplete"] and category in ("", t["category"]) and
                 task_type in ("", t["type"]) and not (flagged and t["shortcut"])}
        filtered = (category, task_type, flagged) != ("", "", "")
        views[f"{category}|{task_type}|{flagged}"] = {
            run.key: summary_cells(frames[run.key] if run.scheme == "paper" else None, family_frames[run.key], shown,
                                   len(shown) if filtered else standing[run.key].n_expected)
            for run in listed}
        for entry in field["models"] if field else ():
            views[f"{category}|{task_type}|{flagged}"][entry["key"]] = summary_cells(
                field["frames"][entry["key"]], None, shown, len(shown))
    present = {task["type"] for task in tasks.values()}
    family_rows = pd.concat([results_frame(run.results) for run in families.values() if run is not None] or
                            [pd.DataFrame()])
    return {
        "generated": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "categories": [c for c in CATEGORIES if any(t["category"] == c for t in tasks.values())],
        "task_types": [t for t in TASK_TYPES if t in present],
        "modalities": sorted({run.model.modality or run.model.input for run in listed}),
        "sizes": [
            {"key": key, "label": label}
            for key, label in [*((k, lbl) for k, lbl, _ in SIZE_BUCKETS), ("unknown", "unknown")]
            if any(model["size"] == key for model in models)
        ],
        "data_hashes": sorted({model["data_hash"] for model in models}),
        "shortcut_auc": SHORTCUT_AUC,
        "tasks": ordered,
        "models": models,
        "views": views,
        "cells": {run.key: task_cells(run, families[run.key]) for run in listed} | (field["cells"] if field else {}),
        "published": {key: field[key] for key in ("label", "models", "modalities")} if field else None,
        "understanding_out": understanding_left_out(family_rows),
        "names_only": names_only_note(family_rows),
        "figures": [{"src": src, "caption": caption} for src, caption in figures],
    }


def _published_field(tasks: dict[str, str], listed: Sequence[ModelRun]) -> dict[str, Any]:
    """The paper's published models on `tasks`, their relation marks for the first paper-fold run listed."""
    from genebench.published.leaderboard import published_entries

    first = next((run for run in listed if run.scheme == "paper"), None)
    return published_entries(tasks, first.provenance.get("sources", {}) if first else None,
                             first.results[0].probe if first else None)


def results_file(run: ModelRun) -> str:
    """The file of a run's results in the site: `results.json`, or `results-family.json` under family folds."""
    return "results.json" if run.scheme == "paper" else f"results-{run.scheme}.json"


def build_site(runs: Sequence[ModelRun], out_dir: str | Path, *, figures: Sequence[Path] = (),
               published: bool = True) -> Path:
    """Write the leaderboard page, its assets, figures and per-model files into `out_dir`.

    Args:
        runs: Validated runs (see `validate_results`).
        out_dir: Output folder; created if needed, files in it are replaced one by one, atomically.
        figures: Extra report figures (PNG/SVG) to show after the generated heatmap; each is re-encoded or
            sanitised (`clean_figure`), or dropped with a warning.
        published: show the paper's published models beside the runs (`leaderboard_data`).

    Returns:
        The path of `index.html`.
    """
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    for asset in ("leaderboard.js", "leaderboard.css"):
        write_atomic(out / "assets" / asset, (ASSETS_DIR / asset).read_bytes())
    for run in runs:
        folder = out / "models" / run.dir_name / run.model.revision
        write_atomic(folder / "model_meta.json", json.dumps(run.meta, indent=2, ensure_ascii=False).encode())
        results = [result.model_dump(mode="json") for result in run.results]
        write_atomic(folder / results_file(run), json.dumps(results, indent=1, ensure_ascii=False).encode())
    shown: list[tuple[str, str]] = []
    listed, beside = pair_schemes(runs)
    n_tasks = 0
    for scheme, scheme_runs in (("paper", [run for run in listed if run.scheme == "paper"]),
                                ("family", [beside.get(run.key, run) for run in listed
                                            if run.scheme == "family" or run.key in beside])):
        frame = score_frame(scheme_runs)
        if frame.empty:
            continue
        standing = run_standings(scheme_runs)
        order = {key: i for i, key in enumerate(standing)}
        frame = frame.iloc[sorted(range(len(frame)), key=lambda i: order[frame["run"].iat[i]])]
        frame["model"] = [f"{model} ({standing[run].note.split(',')[0]})" if standing[run].note else model
                          for model, run in zip(frame["model"], frame["run"])]
        name = f"figures/heatmap_categories{'' if scheme == 'paper' else '_' + scheme}.png"
        plot_category_heatmap(frame, out / name, scheme=scheme)
        shown.append((name, f"Mean ROC AUC over tasks ({scheme} folds), models \u00d7 categories"))
        n_tasks = max(n_tasks, frame["task"].nunique())
    for i, figure in enumerate(figures):
        name = check_safe_name(f"{i:02d}_{figure.name}", what="figure file")
        try:
            write_atomic(out / "figures" / name, clean_figure(figure))
        except FigureError as exc:
            logger.warning("Dropped figure %s: %s; only re-encodable PNGs and SVGs are published.", figure, exc)
            continue
        shown.append((_href("figures", name), figure_caption(figure)))
    page = (ASSETS_DIR / "index.html").read_text(encoding="utf-8")
    page = page.replace("__LEADERBOARD_DATA__", embed_json(leaderboard_data(runs, shown, published=published)))
    index = out / "index.html"
    write_atomic(index, page.encode("utf-8"))
    write_atomic(out / "README.md", SPACE_README.encode("utf-8"))
    logger.info("Wrote %s: %d model runs, %d tasks, %d figures.", index, len(runs), n_tasks, len(shown))
    return index
