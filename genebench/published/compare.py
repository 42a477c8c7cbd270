"""`genebench compare RESULTS --published [MODEL ...]`: a run beside the paper's published scores, task by task.

For each mapped task the run scored: the run's ROC AUC, the paper's, the paper's fold spread and the difference,
with the mapping's relation for this run (`genebench.published.run_relation`), so a difference that comes from a
data release or a protocol is never read as a model's difference; then a summary per category.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genebench import published
from genebench.errors import ResultsError

TOLERANCE = 0.02
"""The smallest difference counted outside the paper's spread (see `within_spread`)."""


def spread(sd: float, n_folds: int = 5) -> float:
    """How far a score may be from the paper's mean and still agree with it: max(`TOLERANCE`, 2 x the paper's fold
    standard deviation / sqrt(n folds)), about the 95% half-width of the paper's own mean.

    Examples:
        >>> round(spread(0.266), 3), spread(0.001)
        (0.238, 0.02)
    """
    return max(TOLERANCE, 2 * sd / math.sqrt(n_folds))


def run_context(results: pd.DataFrame, folders: Sequence[str | Path], label: str) -> tuple[dict, dict]:
    """The data sources and probe settings of the run `label` (a display name of `results`), read from one of its
    result files under `folders`."""
    from genebench.results import read_result

    rows = results[results["label"] == label]
    for folder in folders:
        for relative in rows["path"].head(1):
            path = Path(folder) / relative
            if path.is_file():
                result = read_result(path)
                return dict(result.provenance.get("sources", {})), dict(result.probe)
    raise ResultsError(f"model '{label}': none of its result files was found under {list(map(str, folders))}.")


def task_table(run: pd.DataFrame, model: str, sources: Mapping[str, Any], probe: Mapping[str, Any]) -> pd.DataFrame:
    """One row per mapped task the run scored: task (the paper's name beside it when it differs), category,
    relation for this run, mark, run, published, sd (the paper's fold sd), difference (run - published) and
    within (|difference| <= `spread`)."""
    paper = published.fold_scores()
    paper = paper[(paper["model"] == model) & (paper["relation"] != "none")]
    scores = run.drop_duplicates("task").set_index("task")["mean"]
    paper = paper[paper["task"].isin(scores.index)].sort_values(["category", "task"], kind="stable")
    relations = [published.run_relation(r.relation, r.paper_source, sources, probe) for r in paper.itertuples()]
    difference = scores.reindex(paper["task"]).to_numpy() - paper["mean"].to_numpy()
    limits = np.array([spread(sd, len(folds)) for sd, folds in zip(paper["sd"], paper["folds"])])
    return pd.DataFrame({
        "task": [t if t == p else f"{t} (paper: {p})" for t, p in zip(paper["task"], paper["paper_task"])],
        "category": paper["category"].to_numpy(), "relation": relations,
        "mark": [published.MARKS[r] for r in relations], "run": scores.reindex(paper["task"]).to_numpy(),
        "published": paper["mean"].to_numpy(), "sd": paper["sd"].to_numpy(), "difference": difference,
        "within": np.abs(difference) <= limits})


def category_table(tasks: pd.DataFrame) -> pd.DataFrame:
    """Per category, then over all tasks: task count, how many share the paper's source, release and protocol
    (relation "same"), mean run and published AUC, mean difference, and how many are within the paper's spread."""
    def summary(group: pd.DataFrame) -> dict[str, Any]:
        same = group["relation"] == "same"
        return {"n tasks": len(group), "same": int(same.sum()), "run": group["run"].mean(),
                "published": group["published"].mean(), "difference": group["difference"].mean(),
                "within spread": f"{int(group['within'].sum())} of {len(group)}"}

    rows = [{"category": name, **summary(group)} for name, group in tasks.groupby("category", sort=True)]
    return pd.DataFrame([*rows, {"category": "all", **summary(tasks)}])


@dataclass
class PublishedComparison:
    """A run beside one published model."""

    run: str
    model: str
    tasks: pd.DataFrame
    n_mapped: int

    def to_text(self) -> str:
        """The per-task table, the category summary and the legend, each line at most `MAX_LINE` characters."""
        from genebench.report import fit_line, markdown_table

        same = self.tasks[self.tasks["relation"] == "same"]
        lines = [f"{self.run} against {self.model} {published.GROUP}: {len(self.tasks)} of the paper's "
                 f"{self.n_mapped} mapped tasks scored by the run",
                 "", markdown_table(formatted_scores(self.tasks.drop(columns="relation"))), "",
                 markdown_table(formatted_scores(category_table(self.tasks))), "",
                 "relation: = same source and definition; R same definition on another data release; P another "
                 "protocol (the paper's multi-label ROC AUC from hard 0/1 predictions).",
                 f"difference = run - published; within: |difference| <= max({TOLERANCE}, 2 x the paper's fold sd / "
                 "sqrt(5)).",
                 f"same source, release and protocol: {len(same)} tasks, {int(same['within'].sum())} within the "
                 "paper's spread" + (f", mean difference {same['difference'].mean():+.3f}" if len(same) else "")]
        return "\n".join(fit_line(line) for text in lines for line in text.split("\n"))


def formatted_scores(table: pd.DataFrame) -> pd.DataFrame:
    """Scores to 3 decimals, differences signed, `within` as yes / no."""
    table = table.copy()
    for column in {"run", "published", "sd"} & set(table.columns):
        table[column] = table[column].map("{:.3f}".format)
    table["difference"] = table["difference"].map("{:+.3f}".format)
    if "within" in table:
        table["within"] = table["within"].map({True: "yes", False: "no"})
    return table


def compare_published(results: pd.DataFrame, folders: Sequence[str | Path], models: Sequence[str] | None = None,
                      run: str | None = None) -> list[PublishedComparison]:
    """The run in `results` (`run`, or the only one there) beside each published model of `models` (default: all),
    on the paper's folds.

    Raises:
        ResultsError: no paper-fold scores, several runs and no `run` named, or no mapped task scored.
    """
    from genebench.report import main_scores, select_scheme

    scored = main_scores(select_scheme(results, "paper"))
    labels = sorted(set(scored["label"]))
    if run is None and len(labels) > 1:
        raise ResultsError(f"--published: the results hold {len(labels)} models ({', '.join(labels[:4])}); name the "
                           "one to compare with --a MODEL.")
    run = run or labels[0]
    if run not in labels:
        raise ResultsError(f"model '{run}' has no scored results here; models found: {labels}.")
    mine = scored[scored["label"] == run]
    sources, probe = run_context(scored, folders, run)
    n_mapped = int((published.task_map()["relation"] != "none").sum())
    comparisons = []
    for model in published.select_models(models):
        tasks = task_table(mine, model, sources, probe)
        if tasks.empty:
            raise ResultsError(f"model '{run}' scored none of the paper's {n_mapped} mapped tasks; run it on them "
                               "(`genebench tasks` lists the tasks of the data).")
        comparisons.append(PublishedComparison(run=run, model=model, tasks=tasks, n_mapped=n_mapped))
    return comparisons
