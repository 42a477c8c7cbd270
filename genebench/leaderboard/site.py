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
from genebench.comparability import Standing, revision_id, revision_task_count, standings
from genebench.leaderboard.figures import FigureError, clean_figure
from genebench.leaderboard.validate import MAX_FILE_BYTES, ModelRun, check_safe_name
from genebench.report import plain_text
from genebench.results import added_summary, results_frame, summarised_rows
from genebench.tasks.metadata import CATEGORIES, SHORTCUT_AUC, TASK_TYPES

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
            "data_revision": revision_id(run.dataset_revision),
            "data_tasks": revision_task_count(run.dataset_revision),
            "task": result.task.name,
            "mean": result.scores[result.main_score].mean if result.skipped is None else float("nan"),
            "coverage": result.coverage.fraction,
        }
        for run in runs
        for result in run.results
    ]
    frame = pd.DataFrame(rows, columns=["run", "data_revision", "data_tasks", "task", "mean", "coverage"])
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
    """The runs the page lists (paper folds, or family folds for a model without a paper-fold run) and, by listed
    run key, the family-fold run of the same model and revision shown beside it."""
    paper = {run.key for run in runs if run.folds == "paper"}
    listed = [run for run in runs if run.folds == "paper" or run.key not in paper]
    beside = {run.key: run for run in runs if run.folds == "family" and run.key in paper}
    return listed, beside


def family_summary(run: ModelRun, shortcut: set[str]) -> dict[str, Any]:
    """Per task [AUC, lift, added over names, low, high] (None where unscored), and understanding as [mean, low, high]
    for every view of the page's filters (`understanding_views`)."""
    rows = summarised_rows(results_frame(run.results))
    cell = {row.task: [row.mean, _finite(row.lift), _finite(row.added), _finite(row.added_low),
                       _finite(row.added_high)] for row in rows.itertuples()}
    return {"scores": cell, "understanding": understanding_views(rows, shortcut)}


def understanding_views(rows: pd.DataFrame, shortcut: set[str]) -> dict[str, list[float | None]]:
    """Understanding ([mean, low, high], `added_summary` over the tasks whose name control stays below the shortcut
    line) for each view the page can filter to, keyed "<category>|<type>|<1 when shortcut-solvable tasks are left
    out>" ("" for no filter): the interval is a bootstrap over genes, so each view gets its own."""
    views = {}
    for category in ["", *rows["category"].unique()]:
        for task_type in ["", *rows["type"].unique()]:
            for flagged in ("", "1"):
                kept = rows[((rows["category"] == category) | (category == "")) &
                            ((rows["type"] == task_type) | (task_type == "")) &
                            ~(rows["task"].isin(shortcut) & (flagged == "1"))]
                summary = added_summary(kept, names_below=SHORTCUT_AUC)
                views[f"{category}|{task_type}|{flagged}"] = [_finite(v) for v in summary]
    return views


def _finite(value: Any) -> float | None:
    return None if value is None or value != value else float(value)


@plain_text
def plot_category_heatmap(frame: pd.DataFrame, path: Path) -> Path:
    """Draw models × categories mean AUC (over tasks) as a PNG at `path` (`genebench.report.category_heatmap`),
    rows in the frame's model order, with the best control's mean over the first model's tasks as a last, hatched
    row."""
    from genebench.report import category_grid, category_heatmap, save_figure

    means, _, counts = category_grid(frame, "model")
    first = frame[frame["model"] == frame["model"].iat[0]].assign(model="best control")
    controls = category_grid(first, "model", "control")[0].reindex(columns=means.columns)
    return save_figure(category_heatmap(means, counts, list(means.index), controls=controls), path,
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


def leaderboard_data(runs: Sequence[ModelRun], figures: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """The JSON document the page renders: tasks (with their parent, best control, shortcut flag and the name
    control under family folds), models, per-task main scores ([mean, std, lift over the best control or None]),
    family-fold scores per listed run (`family_summary`) and figures.

    Args:
        runs: Validated runs; a family-fold run of a model that also has a paper-fold run is shown beside it.
        figures: (relative src, caption) pairs.
    """
    listed, beside = pair_schemes(runs)
    tasks: dict[str, dict[str, Any]] = {}
    for run in listed:
        for result in run.results:
            tasks.setdefault(
                result.task.name,
                {
                    "name": result.task.name,
                    "category": result.task.category,
                    "type": result.task.type,
                    "parent": result.task.parent,
                    "n_entities": result.task.n_entities,
                    "best_control": _best_control(result.task.best_control),
                    "shortcut": result.task.is_shortcut_solvable,
                    "incomplete": getattr(result.task, "incomplete", None),
                    "family_name_control": None,
                },
            )
    for run in (*beside.values(), *(run for run in listed if run.folds == "family")):
        for result in run.results:
            if result.task.name in tasks:
                tasks[result.task.name]["family_name_control"] = result.task.controls.get("name")
    models = []
    standing = run_standings(listed)
    for run in listed:
        n_parameters = run.model.n_parameters
        size, size_label = size_bucket(n_parameters)
        family = beside.get(run.key, run if run.folds == "family" else None)
        models.append(
            {
                "key": run.key,
                "id": run.model.id,
                "revision": run.model.revision,
                "folds": run.folds,
                "input": run.model.input,
                "modality": run.model.modality or run.model.input,
                "license": run.model.license,
                "reference": run.model.reference,
                "n_parameters": n_parameters,
                "size": size,
                "size_label": size_label,
                "data_revision": standing[run.key].data_revision,
                "n_tasks": standing[run.key].n_tasks,
                "n_expected": standing[run.key].n_expected,
                "coverage": standing[run.key].coverage,
                "ranked": standing[run.key].rank is not None,
                "note": standing[run.key].note,
                "meta_href": _href("models", run.dir_name, run.model.revision, "model_meta.json"),
                "results_href": _href("models", run.dir_name, run.model.revision, results_file(run)),
                "family_results_href": (_href("models", run.dir_name, run.model.revision, results_file(family))
                                        if family is not None else None),
            }
        )
    scores = {
        run.key: {
            r.task.name: (
                [r.scores[r.main_score].mean, r.scores[r.main_score].std, r.lift] if r.skipped is None else None
            )
            for r in run.results
        }
        for run in listed
    }
    shortcut = {name for name, task in tasks.items() if task["shortcut"]}
    families = {key: family_summary(run, shortcut) for key, run in
                [*beside.items(), *((run.key, run) for run in listed if run.folds == "family")]}
    present = {task["type"] for task in tasks.values()}
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
        "data_revisions": sorted({model["data_revision"] for model in models}),
        "shortcut_auc": SHORTCUT_AUC,
        "tasks": sorted(tasks.values(), key=lambda task: (CATEGORIES.index(task["category"]), task["name"])),
        "models": models,
        "scores": scores,
        "family": families,
        "figures": [{"src": src, "caption": caption} for src, caption in figures],
    }


def results_file(run: ModelRun) -> str:
    """The file of a run's results in the site: `results.json`, or `results-family.json` under family folds."""
    return "results.json" if run.folds == "paper" else f"results-{run.folds}.json"


def _best_control(best: tuple[str, float] | None) -> dict[str, Any] | None:
    return None if best is None else {"name": best[0], "score": best[1]}


def build_site(runs: Sequence[ModelRun], out_dir: str | Path, *, figures: Sequence[Path] = ()) -> Path:
    """Write the leaderboard page, its assets, figures and per-model files into `out_dir`.

    Args:
        runs: Validated runs (see `validate_results`).
        out_dir: Output folder; created if needed, files in it are replaced one by one, atomically.
        figures: Extra report figures (PNG/SVG) to show after the generated heatmap; each is re-encoded or
            sanitised (`clean_figure`), or dropped with a warning.

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
    listed, _ = pair_schemes(runs)
    frame = score_frame(listed)
    standing = run_standings(listed)
    order = {key: i for i, key in enumerate(standing)}
    frame = frame.iloc[sorted(range(len(frame)), key=lambda i: order[frame["run"].iat[i]])]
    frame["model"] = [f"{model} ({standing[run].note.split(',')[0]})" if standing[run].note else model
                      for model, run in zip(frame["model"], frame["run"])]
    if not frame.empty:
        plot_category_heatmap(frame, out / "figures" / "heatmap_categories.png")
        shown.append(("figures/heatmap_categories.png", "Mean ROC AUC over tasks, models \u00d7 categories"))
    for i, figure in enumerate(figures):
        name = check_safe_name(f"{i:02d}_{figure.name}", what="figure file")
        try:
            write_atomic(out / "figures" / name, clean_figure(figure))
        except FigureError as exc:
            logger.warning("Dropped figure %s: %s; only re-encodable PNGs and SVGs are published.", figure, exc)
            continue
        shown.append((_href("figures", name), figure_caption(figure)))
    page = (ASSETS_DIR / "index.html").read_text(encoding="utf-8")
    page = page.replace("__LEADERBOARD_DATA__", embed_json(leaderboard_data(runs, shown)))
    index = out / "index.html"
    write_atomic(index, page.encode("utf-8"))
    write_atomic(out / "README.md", SPACE_README.encode("utf-8"))
    logger.info("Wrote %s: %d model runs, %d tasks, %d figures.", index, len(runs), frame["task"].nunique(), len(shown))
    return index
