"""The leaderboard page: one static HTML file plus assets, from validated runs.

The page embeds its data as JSON in a `<script type="application/json">` block (with `<`, `>` and `&` escaped)
and renders it with DOM text nodes, so nothing from a submission is ever interpreted as HTML. It works from
file:// and as a static Hugging Face Space (the README.md written beside it carries the Space YAML).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd

from genebench.atomic import write_atomic
from genebench.leaderboard.validate import MAX_FILE_BYTES, ModelRun, check_safe_name
from genebench.tasks.metadata import CATEGORIES, TASK_TYPES

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


def score_frame(runs: Sequence[ModelRun]) -> pd.DataFrame:
    """One row per scored (run, task): columns run, model, category, type, task, mean, std (main score)."""
    rows = [
        {
            "run": run.key,
            "model": f"{run.model.id}@{run.model.revision}",
            "category": result.task.category,
            "type": result.task.type,
            "task": result.task.name,
            "mean": result.scores[result.main_score].mean,
            "std": result.scores[result.main_score].std,
        }
        for run in runs
        for result in run.results
        if result.skipped is None
    ]
    return pd.DataFrame(rows, columns=["run", "model", "category", "type", "task", "mean", "std"])


def plot_category_heatmap(frame: pd.DataFrame, path: Path) -> Path:
    """Draw models x categories mean AUC (over tasks) as a PNG at `path`, written atomically."""
    from matplotlib.figure import Figure

    table = frame.pivot_table(index="model", columns="category", values="mean", aggfunc="mean")
    table = table[[c for c in CATEGORIES if c in table.columns]]
    table = table.loc[table.mean(axis=1).sort_values(ascending=False).index]
    label_width = 0.075 * max(len(str(label)) for label in table.index)
    size = (max(6.0, 2.5 + label_width + 1.5 * table.shape[1]), max(3.5, 2.2 + 0.5 * table.shape[0]))
    figure = Figure(figsize=size, layout="constrained")
    axes = figure.add_subplot()
    image = axes.imshow(table.to_numpy(), cmap="viridis", vmin=0.5, vmax=1.0, aspect="auto")
    axes.set_xticks(range(table.shape[1]), table.columns, rotation=30, ha="right")
    axes.set_yticks(range(table.shape[0]), table.index)
    for (i, j), value in pd.DataFrame(table.to_numpy()).stack().items():
        axes.text(j, i, f"{value:.3f}", ha="center", va="center", color="white" if value < 0.75 else "black")
    figure.colorbar(image, ax=axes, label="mean ROC AUC over tasks")
    axes.set_title("Models \u00d7 categories")
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        figure.savefig(Path(tmp) / "figure.png", dpi=120)
        os.replace(Path(tmp) / "figure.png", path)
    return path


def find_figures(dirs: Iterable[Path]) -> list[Path]:
    """PNG and SVG report figures under `dirs` (regular files within the size limit, PNGs by their magic bytes)."""
    found = []
    for root in dirs:
        for path in sorted(Path(root).rglob("*")):
            if path.suffix.lower() not in FIGURE_SUFFIXES or path.is_symlink() or not path.is_file():
                continue
            if path.stat().st_size > MAX_FILE_BYTES:
                logger.warning("Skipping figure %s: over %d bytes.", path, MAX_FILE_BYTES)
            elif path.suffix.lower() == ".png" and path.read_bytes()[:8] != _PNG_MAGIC:
                logger.warning("Skipping figure %s: not a PNG file.", path)
            else:
                found.append(path)
    return found


def _href(*parts: str) -> str:
    return "/".join(quote(part, safe="") for part in parts)


def leaderboard_data(runs: Sequence[ModelRun], figures: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """The JSON document the page renders: tasks, models, per-task main scores and figures.

    Args:
        runs: Validated runs.
        figures: (relative src, caption) pairs.
    """
    tasks: dict[str, dict[str, Any]] = {}
    for run in runs:
        for result in run.results:
            tasks.setdefault(
                result.task.name,
                {
                    "name": result.task.name,
                    "category": result.task.category,
                    "type": result.task.type,
                    "n_entities": result.task.n_entities,
                },
            )
    models = []
    for run in runs:
        n_parameters = run.model.n_parameters
        size, size_label = size_bucket(n_parameters)
        models.append(
            {
                "key": run.key,
                "id": run.model.id,
                "revision": run.model.revision,
                "input": run.model.input,
                "modality": run.model.modality or run.model.input,
                "license": run.model.license,
                "reference": run.model.reference,
                "n_parameters": n_parameters,
                "size": size,
                "size_label": size_label,
                "data_revision": _revision_label(run.dataset_revision),
                "meta_href": _href("models", run.dir_name, run.model.revision, "model_meta.json"),
                "results_href": _href("models", run.dir_name, run.model.revision, "results.json"),
            }
        )
    scores = {
        run.key: {
            r.task.name: ([r.scores[r.main_score].mean, r.scores[r.main_score].std] if r.skipped is None else None)
            for r in run.results
        }
        for run in runs
    }
    present = {task["type"] for task in tasks.values()}
    return {
        "generated": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "categories": [c for c in CATEGORIES if any(t["category"] == c for t in tasks.values())],
        "task_types": [t for t in TASK_TYPES if t in present],
        "modalities": sorted({run.model.modality or run.model.input for run in runs}),
        "sizes": [
            {"key": key, "label": label}
            for key, label in [*((k, lbl) for k, lbl, _ in SIZE_BUCKETS), ("unknown", "unknown")]
            if any(model["size"] == key for model in models)
        ],
        "data_revisions": sorted({model["data_revision"] for model in models}),
        "tasks": sorted(tasks.values(), key=lambda task: (CATEGORIES.index(task["category"]), task["name"])),
        "models": models,
        "scores": scores,
        "figures": [{"src": src, "caption": caption} for src, caption in figures],
    }


def _revision_label(revision: dict[str, Any]) -> str:
    """A short, stable fingerprint of a dataset revision dict."""
    digest = hashlib.sha256(json.dumps(revision, sort_keys=True, default=str).encode()).hexdigest()
    return digest[:12]


def build_site(runs: Sequence[ModelRun], out_dir: str | Path, *, figures: Sequence[Path] = ()) -> Path:
    """Write the leaderboard page, its assets, figures and per-model files into `out_dir`.

    Args:
        runs: Validated runs (see `validate_results`).
        out_dir: Output folder; created if needed, files in it are replaced one by one, atomically.
        figures: Extra report figures (PNG/SVG) to show after the generated heatmap.

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
        write_atomic(folder / "results.json", json.dumps(results, indent=1, ensure_ascii=False).encode())
    shown: list[tuple[str, str]] = []
    frame = score_frame(runs)
    if not frame.empty:
        plot_category_heatmap(frame, out / "figures" / "heatmap_categories.png")
        shown.append(("figures/heatmap_categories.png", "Mean ROC AUC over tasks, models \u00d7 categories"))
    for i, figure in enumerate(figures):
        name = check_safe_name(f"{i:02d}_{figure.name}", what="figure file")
        write_atomic(out / "figures" / name, figure.read_bytes())
        shown.append((_href("figures", name), figure.stem.replace("_", " ")))
    page = (ASSETS_DIR / "index.html").read_text(encoding="utf-8")
    page = page.replace("__LEADERBOARD_DATA__", embed_json(leaderboard_data(runs, shown)))
    index = out / "index.html"
    write_atomic(index, page.encode("utf-8"))
    write_atomic(out / "README.md", SPACE_README.encode("utf-8"))
    logger.info("Wrote %s: %d model runs, %d tasks, %d figures.", index, len(runs), frame["task"].nunique(), len(shown))
    return index
