"""Reports over result tables: per-task and per-category tables, figures, and paired model comparisons.

Every function takes the tidy table of `genebench.results.load_results` and only reads its main-score rows.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from genebench.atomic import write_atomic
from genebench.comparability import Standing, standings
from genebench.errors import ResultsError
from genebench.results import drop_flagged, format_lift, score_cell, summary_table
from genebench.tasks.metadata import CATEGORIES, SHORTCUT_AUC
from genebench.wording import counted

T = TypeVar("T")

TIE = 0.005
"""Two AUCs closer than this count as a tie: the probe's own tolerance against scikit-learn."""


def _labelled(results: pd.DataFrame) -> pd.DataFrame:
    """`results` with a display name per model: its id, plus `@revision` where one id has several revisions."""
    revisions = results.groupby("model")["revision"].nunique()
    return results.assign(label=[m if revisions[m] == 1 else f"{m}@{r[:8]}"
                                 for m, r in zip(results["model"], results["revision"])])


def main_scores(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, task): the main score's mean and std, its coverage, and a display name per model."""
    scored = _labelled(results)
    scored = scored[scored["is_main"] & scored["mean"].notna()].copy()
    if scored.empty:
        raise ResultsError("no scored results: every task was skipped or the folder holds no result files.")
    return scored


def run_standings(results: pd.DataFrame) -> list[Standing]:
    """Each model's task count, coverage, completeness and rank (see `genebench.comparability.standings`)."""
    rows = _labelled(results)
    rows = rows[rows["is_main"] | rows["metric"].isna()]  # every task the run holds, scored or skipped
    return standings(rows.assign(run=rows["label"])[["run", "data_revision", "data_tasks", "task", "mean",
                                                     "coverage"]])


def flagged_note(results: pd.DataFrame, *, excluded: bool) -> str:
    """One line naming the shortcut-solvable tasks among `results` and their best control; "" when none is."""
    flagged = results[results["is_flagged"].astype(bool)].drop_duplicates("task")
    if flagged.empty:
        return ""
    names = ", ".join(f"{task} ({control})" for task, control in zip(flagged["task"], flagged["best_control"]))
    action = "left out (--exclude-flagged)" if excluded else "--exclude-flagged leaves such tasks out"
    return (f"\n{counted(len(flagged), 'shortcut-solvable task')} (a control reaches ROC AUC {SHORTCUT_AUC}): {names}; "
            f"{action}.")


def per_task_table(results: pd.DataFrame) -> pd.DataFrame:
    """Tasks × models: "mean ± std (lift)" of the main score per fold, plus each task's category, type and best
    control (flagged "shortcut" when it reaches `SHORTCUT_AUC`)."""
    scored = main_scores(results)
    scored["cell"] = [f"{m:.3f} ± {s:.3f} ({format_lift(lift)})"
                      for m, s, lift in zip(scored["mean"], scored["std"], scored["lift"])]
    table = scored.pivot_table(index=["category", "type", "task"], columns="label", values="cell", aggfunc="first")
    controls = scored.drop_duplicates("task").set_index("task")
    control = [f"{controls.at[t, 'best_control']}{' shortcut' if controls.at[t, 'is_flagged'] else ''}"
               if controls.at[t, "best_control"] else "\u2013" for t in table.index.get_level_values("task")]
    table.insert(0, "best control", control)
    return table.reset_index().rename_axis(columns=None)


def category_table(results: pd.DataFrame) -> pd.DataFrame:
    """Models × (categories, task types): mean ± std over task AUCs, the paper's table, with each model's mean lift
    over the best control.

    Each model's rank (complete runs of one data revision only), task count, mean coverage and, for an unranked
    run, why: ranked runs come first, by rank.
    """
    scored = main_scores(results)
    summary = summary_table(scored.assign(model=scored["label"]))
    table = summary.pivot_table(index="model", columns="group", values="cell", aggfunc="first")
    order = [c for c in (*CATEGORIES, *sorted(set(summary["group"]) - set(CATEGORIES))) if c in table.columns]
    overall = scored.groupby("label")["mean"].agg(mean="mean", std=lambda v: float(np.std(v)), size="size")
    lift = scored.groupby("label")["lift"].mean()
    ranking = [s for s in run_standings(results) if s.run in table.index]
    table = table.loc[[s.run for s in ranking], order]
    table.insert(0, "rank", [s.rank if s.rank else "–" for s in ranking])
    table.insert(1, "all tasks", [score_cell(overall.loc[s.run, "mean"], overall.loc[s.run, "std"],
                                             int(overall.loc[s.run, "size"])) for s in ranking])
    table.insert(2, "lift", [format_lift(lift.loc[s.run]) for s in ranking])
    table.insert(3, "n tasks", [s.tasks_label for s in ranking])
    table.insert(4, "coverage", [f"{s.coverage:.1%}" for s in ranking])
    table.insert(5, "note", [s.note for s in ranking])
    return table.fillna("–").reset_index().rename_axis(columns=None)


def category_means(results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Three frames, models × categories: the mean, the std and the number of tasks of the main score."""
    return category_grid(main_scores(results), "label")


def category_grid(scores: pd.DataFrame, row: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Mean, std and count of `scores["mean"]` per (`row`, category): three frames, rows in first-seen order and
    categories in the paper's order."""
    grouped = scores.groupby([row, "category"], sort=False)["mean"]
    columns = [c for c in CATEGORIES if c in set(scores["category"])]
    rows = list(dict.fromkeys(scores[row]))
    means = grouped.mean().unstack().reindex(index=rows, columns=columns)
    stds = grouped.agg(lambda v: float(np.std(v))).unstack().reindex(index=rows, columns=columns)
    counts = grouped.size().unstack().reindex(index=rows, columns=columns)
    return means, stds, counts


def _model_labels(results: pd.DataFrame, labels: list[str]) -> list[str]:
    """Display names for figures: an unranked run says why ("… (partial: 2 of 132 tasks)")."""
    notes = {s.run: s.note.split(",")[0] for s in run_standings(results)}
    return [f"{label} ({notes[label]})" if notes.get(label) else label for label in labels]


def plain_text(draw: Callable[..., T]) -> Callable[..., T]:
    """Run a drawing function with matplotlib's mathtext off, so names are drawn as written (`$` included)."""

    @functools.wraps(draw)
    def drawn(*args: Any, **kwargs: Any) -> T:
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return drawn


@plain_text
def plot_heatmap(results: pd.DataFrame, path: Path) -> list[Path]:
    """A models × categories heatmap of mean AUC (PNG and SVG), ranked runs first."""
    means, _, counts = category_means(results)
    order = [s.run for s in run_standings(results) if s.run in means.index]
    figure = category_heatmap(means.loc[order], counts.loc[order], _model_labels(results, order))
    return save_figure(figure, path)


def category_heatmap(means: pd.DataFrame, counts: pd.DataFrame, labels: Sequence[str]):
    """The one models × categories figure: mean ROC AUC per cell, annotated with its value and task count.

    Args:
        means: models × categories mean AUC (NaN: no task).
        counts: the number of tasks behind each cell.
        labels: one row label per model.

    Returns:
        A matplotlib `Figure` (no pyplot state), for `save_figure`.
    """
    from matplotlib.figure import Figure

    width = max(8.0, 2.0 * means.shape[1] + 0.1 * max(len(label) for label in labels) + 2.5)
    figure = Figure(figsize=(width, max(3.5, 0.75 * means.shape[0] + 2.2)), layout="constrained")
    axes = figure.add_subplot()
    values = means.to_numpy(dtype=float)
    image = axes.imshow(values, cmap="viridis", vmin=0.5, vmax=1.0, aspect="auto")
    axes.set_xticks(range(means.shape[1]), [c.replace(" ", "\n") for c in means.columns], fontsize=11)
    axes.set_yticks(range(means.shape[0]), labels, fontsize=11)
    for (row, col), value in np.ndenumerate(values):
        if np.isfinite(value):
            axes.text(col, row, f"{value:.3f}\nn={int(counts.iloc[row, col])}", ha="center", va="center",
                      fontsize=11, color="white" if value < 0.8 else "black")
    figure.colorbar(image, ax=axes).set_label("mean ROC AUC over the category's tasks", fontsize=11)
    axes.set_title("Mean ROC AUC by category (n: tasks per cell)", fontsize=12)
    return figure


@plain_text
def plot_categories(results: pd.DataFrame, path: Path) -> list[Path]:
    """Mean AUC ± std over tasks per category, each bar labelled with its value and task count; PNG and SVG.

    One model: one bar per category. Several: one panel per category, one bar per model. Values sit right of the
    error bars; a bar over one task has no error bar.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    means, stds, counts = category_means(results)
    order = [s.run for s in run_standings(results) if s.run in means.index]  # ranked first, then the others
    means, stds, counts = means.loc[order], stds.loc[order], counts.loc[order]
    models, categories = list(means.index), list(means.columns)
    low = min(0.4, float(np.nanmin((means - stds).to_numpy())) - 0.02)
    if len(models) == 1:
        panels = [(None, categories, means.iloc[0].to_numpy(), stds.iloc[0].to_numpy(), counts.iloc[0].to_numpy())]
    else:
        names = dict(zip(models, _model_labels(results, models)))
        panels = [(c, [names[m] for m in models], means[c].to_numpy(), stds[c].to_numpy(), counts[c].to_numpy())
                  for c in categories]
    rows = max(len(labels) for _, labels, *_ in panels)
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False,
                             figsize=(9, 0.9 + len(panels) * (0.45 + 0.34 * rows)))
    for ax, (title, labels, values, errors, ns) in zip(axes[:, 0], panels):
        y = np.arange(len(labels))[::-1]
        errors = np.where(ns > 1, errors, np.nan)  # one task: no spread to show
        ax.barh(y, values - low, left=low, xerr=errors, height=0.7, capsize=3,
                color=[f"C{i}" for i in range(len(labels))] if title else "C0")
        for row, value, error, n in zip(y, values, errors, ns):
            if np.isfinite(value):
                ax.text(value + np.nan_to_num(error) + 0.006, row, f"{value:.3f}  n={int(n)}", va="center",
                        ha="left", fontsize=8)
        ax.set_yticks(y, labels, fontsize=8)
        if title:
            ax.set_title(title, loc="left", fontsize=10)
        ax.axvline(0.5, color="grey", lw=0.8, ls="--")
    axes[-1, 0].set_xlim(low, 1.12)
    axes[-1, 0].set_xticks([t for t in axes[-1, 0].get_xticks() if low <= t <= 1.0])
    axes[-1, 0].set_xlabel("ROC AUC, mean ± std over the category's n tasks (dashed: chance)")
    fig.suptitle("Gene benchmark by category" + ("" if len(models) > 1 else f": {models[0]}"), x=0.02, ha="left")
    fig.tight_layout()
    return save_figure(fig, path)


def save_figure(figure, path: Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write a matplotlib figure as `path` with each suffix in `formats`, atomically; close it if pyplot made it."""
    import io

    written = []
    for suffix in formats:
        buffer = io.BytesIO()
        figure.savefig(buffer, format=suffix, dpi=150, bbox_inches="tight")
        written.append(write_atomic(path.with_suffix(f".{suffix}"), buffer.getvalue()))
    if figure.canvas.manager is not None:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return written



def markdown_table(table: pd.DataFrame) -> str:
    """A table as markdown, cells as written ("+0.000" lifts keep their sign), numbers right-aligned."""
    align = ["right" if pd.api.types.is_numeric_dtype(table[c]) or c == "lift" else "left" for c in table.columns]
    return table.to_markdown(index=False, disable_numparse=True, colalign=align)

def write_report(results: pd.DataFrame, out: str | Path, *, exclude_flagged: bool = False) -> list[Path]:
    """Write tables (markdown, CSV, HTML) and figures (PNG, SVG) for every model in `results`.

    With `exclude_flagged`, the category table and figures leave out shortcut-solvable tasks; the task table
    lists every task, flagged ones marked.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summarised = drop_flagged(results) if exclude_flagged else results
    tables = {"categories": category_table(summarised), "tasks": per_task_table(results)}
    written = []
    for name, table in tables.items():
        markdown = markdown_table(table)
        for suffix, text in ((".md", markdown), (".csv", table.to_csv(index=False))):
            written.append(write_atomic(out / f"{name}{suffix}", text))
    written.append(write_atomic(out / "report.html", _html(tables)))
    written += plot_heatmap(summarised, out / "heatmap")
    written += plot_categories(summarised, out / "categories")
    return written


def _html(tables: dict[str, pd.DataFrame]) -> str:
    sections = "".join(f"<h2>{html.escape(name)}</h2>{table.to_html(index=False, escape=True, border=0)}"
                       for name, table in tables.items())
    return ("<!doctype html><meta charset='utf-8'><title>genebench report</title><style>body{font-family:sans-serif;"
            "margin:2em}table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid #ddd;"
            "text-align:left}</style><h1>genebench report</h1><img src='heatmap.svg' alt='heatmap of mean AUC by "
            f"category'><img src='categories.svg' alt='mean AUC by category'>{sections}")


@dataclass
class Comparison:
    """A paired comparison of two models over the tasks both scored."""

    a: str
    b: str
    n_tasks: int
    mean_lift_a: float
    mean_lift_b: float
    mean_difference: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int
    largest: pd.DataFrame
    standings: tuple[Standing, Standing]

    def to_text(self) -> str:
        """A short human-readable summary."""
        lines = [
            *(f"{name}: {s.tasks_label} tasks, coverage {s.coverage:.1%}" + (f" ({s.note})" if s.note else "")
              for name, s in zip("AB", self.standings)),
            f"{self.a} vs {self.b} over {self.n_tasks} shared tasks",
            f"mean AUC difference (A - B): {self.mean_difference:+.4f}  95% bootstrap CI [{self.ci_low:+.4f}, "
            f"{self.ci_high:+.4f}]",
            f"A wins {self.wins}, ties {self.ties} (|diff| < {TIE}), loses {self.losses}",
            f"mean lift over the best control: A {format_lift(self.mean_lift_a)}, B {format_lift(self.mean_lift_b)}",
            "", "tasks where they differ most:", self.largest.to_markdown(index=False, floatfmt=".3f"),
        ]
        return "\n".join(lines)


def compare(results: pd.DataFrame, a: str, b: str, *, n_boot: int = 10_000, top: int = 10, seed: int = 0) -> Comparison:
    """Paired comparison of models `a` and `b` (names as shown in reports) on their shared tasks, with each one's
    mean lift over the best control. Pass `drop_flagged(results)` to leave out shortcut-solvable tasks.

    The confidence interval is a percentile bootstrap over tasks with `np.random.default_rng(seed)`.
    """
    scored = main_scores(results)
    known = sorted(set(scored["label"]))
    for name in (a, b):
        if name not in known:
            raise ResultsError(f"model '{name}' has no scored results here; models found: {known}.")
    wide = scored.pivot_table(index="task", columns="label", values="mean", aggfunc="first")[[a, b]].dropna()
    if wide.empty:
        raise ResultsError(f"models '{a}' and '{b}' share no scored task; run both on the same tasks.")
    lifts = scored.pivot_table(index="task", columns="label", values="lift", aggfunc="first", dropna=False)
    lifts = lifts.reindex(index=wide.index, columns=[a, b])
    diff = (wide[a] - wide[b]).to_numpy()
    rng = np.random.default_rng(seed)
    boots = diff[rng.integers(0, len(diff), size=(n_boot, len(diff)))].mean(axis=1)
    largest = wide.assign(**{f"lift {a}": lifts[a], f"lift {b}": lifts[b], "difference": diff})
    largest = largest.iloc[np.argsort(-np.abs(diff), kind="stable")].head(top)
    return Comparison(
        a=a, b=b, n_tasks=len(diff), mean_lift_a=float(lifts[a].mean()), mean_lift_b=float(lifts[b].mean()),
        mean_difference=float(diff.mean()),
        ci_low=float(np.quantile(boots, 0.025)), ci_high=float(np.quantile(boots, 0.975)),
        wins=int((diff >= TIE).sum()), ties=int((np.abs(diff) < TIE).sum()), losses=int((diff <= -TIE).sum()),
        largest=largest.reset_index(),
        standings=tuple(next(s for s in run_standings(results) if s.run == name) for name in (a, b)),
    )
