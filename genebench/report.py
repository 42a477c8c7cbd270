"""Reports over result tables: per-task and per-category tables, figures, and paired model comparisons.

Every function takes the tidy table of `genebench.results.load_results` and only reads its main-score rows.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from genebench.atomic import write_atomic
from genebench.errors import ResultsError
from genebench.results import summary_table
from genebench.tasks.metadata import CATEGORIES

TIE = 0.005
"""Two AUCs closer than this count as a tie: the probe's own tolerance against scikit-learn."""


def main_scores(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, task): the main score's mean and std, its coverage, and a display name per model."""
    scored = results[results["is_main"] & results["mean"].notna()].copy()
    if scored.empty:
        raise ResultsError("no scored results: every task was skipped or the folder holds no result files.")
    revisions = scored.groupby("model")["revision"].nunique()
    scored["label"] = [m if revisions[m] == 1 else f"{m}@{r[:8]}" for m, r in zip(scored["model"], scored["revision"])]
    return scored


def per_task_table(results: pd.DataFrame) -> pd.DataFrame:
    """Tasks × models: "mean ± std" of the main score per fold, plus each task's category and type."""
    scored = main_scores(results)
    scored["cell"] = [f"{m:.3f} ± {s:.3f}" for m, s in zip(scored["mean"], scored["std"])]
    table = scored.pivot_table(index=["category", "type", "task"], columns="label", values="cell", aggfunc="first")
    return table.reset_index().rename_axis(columns=None)


def category_table(results: pd.DataFrame) -> pd.DataFrame:
    """Models × (categories, task types): mean ± std over task AUCs, the paper's table."""
    scored = main_scores(results)
    summary = summary_table(scored.assign(model=scored["label"]))
    table = summary.pivot_table(index="model", columns="group", values="cell", aggfunc="first")
    order = [c for c in (*CATEGORIES, *sorted(set(summary["group"]) - set(CATEGORIES))) if c in table.columns]
    overall = scored.groupby("label")["mean"].agg(["mean", lambda v: float(np.std(v)), "size"])
    table = table[order]
    table.insert(0, "all tasks", [f"{overall.loc[m, 'mean']:.3f} ± {overall.loc[m, '<lambda_0>']:.3f}"
                                  for m in table.index])
    table.insert(1, "n tasks", [int(overall.loc[m, "size"]) for m in table.index])
    return table.reset_index().rename_axis(columns=None)


def category_means(results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two frames, models × categories: the mean and the std over tasks of the main score."""
    scored = main_scores(results)
    grouped = scored.groupby(["label", "category"])["mean"]
    means = grouped.mean().unstack().reindex(columns=[c for c in CATEGORIES if c in set(scored["category"])])
    stds = grouped.agg(lambda v: float(np.std(v))).unstack().reindex(columns=means.columns)
    return means, stds


def plot_heatmap(results: pd.DataFrame, path: Path) -> list[Path]:
    """A models × categories heatmap of mean AUC, each cell annotated; written as PNG and SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    means, _ = category_means(results)
    fig, ax = plt.subplots(figsize=(1.9 * len(means.columns) + 3, 0.6 * len(means) + 1.8))
    image = ax.imshow(means.to_numpy(dtype=float), cmap="viridis", vmin=0.5, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(means.columns)), [c.replace(" ", "\n") for c in means.columns])
    ax.set_yticks(range(len(means)), means.index)
    for (row, col), value in np.ndenumerate(means.to_numpy(dtype=float)):
        if np.isfinite(value):
            ax.text(col, row, f"{value:.3f}", ha="center", va="center", color="white" if value < 0.8 else "black")
    fig.colorbar(image, ax=ax, label="mean ROC AUC over tasks")
    ax.set_title("Mean ROC AUC by category")
    return _save(fig, path)


def plot_categories(results: pd.DataFrame, path: Path) -> list[Path]:
    """Mean AUC ± std over tasks per category, every bar labelled; PNG and SVG.

    One model: one bar per category. Several: one panel per category, one bar per model.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    means, stds = category_means(results)
    models, categories = list(means.index), list(means.columns)
    low = min(0.4, float(np.nanmin((means - stds).to_numpy())) - 0.02)
    if len(models) == 1:
        panels = [(None, categories, means.iloc[0].to_numpy(), stds.iloc[0].to_numpy())]
    else:
        panels = [(c, models, means[c].to_numpy(), stds[c].to_numpy()) for c in categories]
    rows = max(len(labels) for _, labels, _, _ in panels)
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False,
                             figsize=(8, 0.9 + len(panels) * (0.45 + 0.32 * rows)))
    for ax, (title, labels, values, errors) in zip(axes[:, 0], panels):
        y = np.arange(len(labels))[::-1]
        ax.barh(y, values - low, left=low, xerr=errors, height=0.7, capsize=3,
                color=[f"C{i}" for i in range(len(labels))] if title else "C0")
        for row, value in zip(y, values):
            if np.isfinite(value):
                ax.text(low + 0.005, row, f" {value:.3f}", va="center", ha="left", fontsize=8, color="white",
                        fontweight="bold")
        ax.set_yticks(y, labels, fontsize=8)
        if title:
            ax.set_title(title, loc="left", fontsize=10)
        ax.axvline(0.5, color="grey", lw=0.8, ls="--")
    axes[-1, 0].set_xlim(low, 1.0)
    axes[-1, 0].set_xlabel("ROC AUC, mean ± std over the category's tasks (dashed: chance)")
    fig.suptitle("Gene benchmark by category" + ("" if len(models) > 1 else f": {models[0]}"), x=0.02, ha="left")
    fig.tight_layout()
    return _save(fig, path)


def _save(fig, path: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        target = path.with_suffix(suffix)
        tmp = target.with_name(f".{target.name}.tmp{suffix}")
        fig.savefig(tmp, dpi=150, bbox_inches="tight")
        tmp.replace(target)
        written.append(target)
    plt.close(fig)
    return written


def write_report(results: pd.DataFrame, out: str | Path) -> list[Path]:
    """Write tables (markdown, CSV, HTML) and figures (PNG, SVG) for every model in `results`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = {"categories": category_table(results), "tasks": per_task_table(results)}
    written = []
    for name, table in tables.items():
        for suffix, text in ((".md", table.to_markdown(index=False)), (".csv", table.to_csv(index=False))):
            written.append(write_atomic(out / f"{name}{suffix}", text))
    written.append(write_atomic(out / "report.html", _html(tables)))
    written += plot_heatmap(results, out / "heatmap")
    written += plot_categories(results, out / "categories")
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
    mean_difference: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int
    largest: pd.DataFrame

    def to_text(self) -> str:
        """A short human-readable summary."""
        lines = [
            f"{self.a} vs {self.b} over {self.n_tasks} shared tasks",
            f"mean AUC difference (A - B): {self.mean_difference:+.4f}  95% bootstrap CI [{self.ci_low:+.4f}, "
            f"{self.ci_high:+.4f}]",
            f"A wins {self.wins}, ties {self.ties} (|diff| < {TIE}), loses {self.losses}",
            "", "tasks where they differ most:", self.largest.to_markdown(index=False, floatfmt=".3f"),
        ]
        return "\n".join(lines)


def compare(results: pd.DataFrame, a: str, b: str, *, n_boot: int = 10_000, top: int = 10, seed: int = 0) -> Comparison:
    """Paired comparison of models `a` and `b` (names as shown in reports) on their shared tasks.

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
    diff = (wide[a] - wide[b]).to_numpy()
    rng = np.random.default_rng(seed)
    boots = diff[rng.integers(0, len(diff), size=(n_boot, len(diff)))].mean(axis=1)
    largest = wide.assign(difference=diff).iloc[np.argsort(-np.abs(diff), kind="stable")].head(top)
    return Comparison(
        a=a, b=b, n_tasks=len(diff), mean_difference=float(diff.mean()),
        ci_low=float(np.quantile(boots, 0.025)), ci_high=float(np.quantile(boots, 0.975)),
        wins=int((diff >= TIE).sum()), ties=int((np.abs(diff) < TIE).sum()), losses=int((diff <= -TIE).sum()),
        largest=largest.reset_index(),
    )
