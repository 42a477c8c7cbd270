"""Reports over result tables: per-task and per-category tables, figures, and paired model comparisons.

Every function takes the tidy table of `genebench.results.load_results` and only reads its main-score rows.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from genebench.atomic import write_atomic
from genebench.comparability import Standing, standings
from genebench.controls.added import mean_with_ci
from genebench.controls.reference import names_only_reference
from genebench.errors import ResultsError
from genebench.results import (
    added_draws,
    added_summary,
    drop_flagged,
    format_added,
    format_lift,
    score_cell,
    summarised_rows,
    summary_table,
    vote_means,
)
from genebench.tasks.metadata import CATEGORIES, FOLD_SCHEMES, SHORTCUT_AUC
from genebench.wording import counted

if TYPE_CHECKING:
    from genebench.embeddings import GeneEmbeddings

T = TypeVar("T")

TIE = 0.005
"""Two AUCs closer than this count as a tie: the probe's own tolerance against scikit-learn."""
MAX_LINE = 200
"""The longest line genebench prints: wider tables are split."""


def fit_line(text: str) -> str:
    """`text` cut to `MAX_LINE` characters, ending in "…" when cut (details stay in the result files).

    Examples:
        >>> len(fit_line("x" * 500))
        200
    """
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "\u2026"


def _labelled(results: pd.DataFrame) -> pd.DataFrame:
    """`results` with a display name per model: its id, plus `@<model_revision>` where one id has several revisions."""
    if "label" in results:
        return results
    revisions = results.groupby("model")["model_revision"].nunique()
    return results.assign(label=[m if revisions[m] == 1 else f"{m}@{r[:8]}"
                                 for m, r in zip(results["model"], results["model_revision"])])


def pair_of_models(results: pd.DataFrame, a: str | None, b: str | None) -> tuple[str, str]:
    """The two models `compare` compares: `a` and `b` as given, or, where the results hold exactly two models, the
    missing ones from them (in the order their folders were given).

    Raises:
        ResultsError: a model is missing and the results do not hold exactly two.
    """
    if a is not None and b is not None:
        return a, b
    models = list(dict.fromkeys(_labelled(results)["label"]))
    others = [m for m in models if m not in (a, b)]
    if len(models) != 2 or not others:
        raise ResultsError(f"expected --a MODEL and --b MODEL (two models), or --published [MODEL ...]; the "
                           f"folders hold {models}: pass both, or --published.")
    return (a, others[0]) if a is not None else (others[0], b) if b is not None else (models[0], models[1])


def by_scheme(results: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """`results` (display names added) split by fold scheme, in `FOLD_SCHEMES` order: the schemes that hold a score
    (a scheme whose every task was skipped, e.g. HLA alone under family folds, is left out), else every scheme
    present."""
    labelled = _labelled(results)
    column = labelled["scheme"] if "scheme" in labelled else pd.Series("paper", index=labelled.index)
    present = {scheme: labelled[column == scheme] for scheme in FOLD_SCHEMES if (column == scheme).any()}
    scored = {scheme: rows for scheme, rows in present.items()
              if (rows["is_main"].astype(bool) & rows["mean"].notna()).any()}
    return scored or present


def select_scheme(results: pd.DataFrame, scheme: str | None) -> pd.DataFrame:
    """`results` of one fold scheme, or all of them (None).

    Raises:
        ResultsError: no result of that scheme.
    """
    if scheme is None:
        return results
    schemes = by_scheme(results)
    if scheme in schemes:
        return schemes[scheme]
    skipped = results[results["scheme"] == scheme] if "scheme" in results else results.iloc[:0]
    if len(skipped):
        first = skipped.iloc[0]
        raise ResultsError(f"--scheme {scheme}: expected scored results under {scheme} folds, found only skipped tasks "
                           f"({skipped['task'].nunique()}; '{first['task']}': {first['skipped']}); run tasks that "
                           f"{scheme} folds can score, or leave out --scheme.")
    raise ResultsError(f"--scheme {scheme}: expected results scored under {scheme} folds, found only "
                       f"{sorted(schemes) or 'none'}; run the model with --scheme {scheme} first.")


def main_scores(results: pd.DataFrame, *, unconverged: bool = False) -> pd.DataFrame:
    """One row per (model, task): the main score's mean and std, its coverage, and a display name per model.

    Scores whose probe did not converge are left out unless `unconverged` (the per-task table shows them, marked).
    """
    scored = _labelled(results)
    keep = scored["is_main"].astype(bool) & scored["mean"].notna()
    if not unconverged and "converged" in scored:
        keep &= scored["converged"].astype(bool)
    scored = scored[keep].copy()
    if scored.empty:
        why = "" if unconverged else ", its probe did not converge"
        raise ResultsError(f"no scored results: every task was skipped{why} or the folder holds no result files.")
    return scored


def run_standings(results: pd.DataFrame) -> list[Standing]:
    """Each model's task count, coverage, completeness and rank (see `genebench.comparability.standings`)."""
    rows = _labelled(results)
    rows = rows[rows["is_main"] | rows["metric"].isna()]  # every task the run holds, scored or skipped
    votes = rows["parent"].where(rows["parent"].notna(), rows["task"]) if "parent" in rows else rows["task"]
    return standings(rows.assign(run=rows["label"], vote=votes)[["run", "data_hash", "data_tasks", "task", "vote",
                                                                 "mean", "coverage"]])


def flagged_note(results: pd.DataFrame, *, excluded: bool) -> str:
    """Two lines: the shortcut-solvable tasks among `results` counted by the control that solves them, per fold
    scheme, and where to list them (`genebench tasks --flagged`); "" when none is."""
    counts = []
    for scheme, rows in by_scheme(results).items():
        flagged = rows[rows["is_flagged"].astype(bool)].drop_duplicates("task")
        if len(flagged):
            controls = flagged["best_control"].astype(str).str.split(" ").str[0].value_counts()
            by_control = ", ".join(f"{name} {n}" for name, n in sorted(controls.items(), key=lambda c: (-c[1], c[0])))
            counts.append(f"{counted(len(flagged), 'task')} under {scheme} folds ({by_control})")
    if not counts:
        return ""
    action = ("left out of every summary, under both schemes (--exclude-flagged: a task a control solves under "
              "either scheme)" if excluded else "--exclude-flagged leaves them out of both schemes' summaries")
    return (f"\nshortcut-solvable (a control reaches ROC AUC {SHORTCUT_AUC}): {'; '.join(counts)}.\n"
            f"`genebench tasks --flagged [--scheme family]` lists them; {action}.")


def unconverged_note(results: pd.DataFrame) -> str:
    """One line naming the scores whose probe did not converge (left out of summaries); "" when every one did."""
    unconverged = results[results["is_main"].astype(bool) & ~results["converged"].astype(bool)]
    if unconverged.empty:
        return ""
    listed = "; ".join(f"{row.model} '{row.task}'" for row in unconverged.head(2).itertuples())
    return (f"\n{counted(len(unconverged), 'score is', 'scores are')} not the probe's optimum (it did not converge): "
            f"marked 'not converged' in the per-task table and left out of the summaries: {listed}"
            f"{' ...' if len(unconverged) > 2 else ''}")


def task_cell(mean: float, std: float, n_folds: int, lift: float, metric: str = "roc_auc") -> str:
    """One task's score as every table and the leaderboard show it: "mean ± std (lift)" over folds, "mean (lift)"
    for one split (a train-test task: no spread to show), the metric named when it is not ROC AUC.

    Examples:
        >>> task_cell(0.8123, 0.0121, 5, 0.05), task_cell(0.61, 0.0, 1, -0.01, "auc_per_gene")
        ('0.812 ± 0.012 (+0.050)', '0.610 auc_per_gene (-0.010)')
    """
    spread = f" ± {std:.3f}" if n_folds > 1 else ""
    named = "" if metric == "roc_auc" else f" {metric}"
    return f"{mean:.3f}{spread}{named} ({format_lift(lift)})"


def per_task_table(results: pd.DataFrame) -> pd.DataFrame:
    """Tasks × models: "mean ± std (lift)" of the main score per fold, plus each task's category, type and best
    control (flagged "shortcut" when it reaches `SHORTCUT_AUC`). With family-fold results, each model also has a
    "<model> family" column and a "<model> added" column (added over names and its 95% interval), and the best
    control under family folds is shown."""
    tables = []
    for scheme, rows in by_scheme(results).items():
        scored = main_scores(rows, unconverged=True)
        converged = scored["converged"].astype(bool) if "converged" in scored else scored["mean"].notna()
        suffix = "" if scheme == "paper" else f" {scheme}"
        columns = (scored[c] for c in ("mean", "std", "n_folds", "lift", "metric"))
        scored["cell"] = [f"{task_cell(*values)}{'' if ok else ' not converged'}"
                          for *values, ok in zip(*columns, converged)]
        scored["added cell"] = [format_added(*v) for v in zip(scored["added"], scored["added_low"],
                                                               scored["added_high"])]
        table = scored.pivot_table(index=["category", "type", "task"], columns="label", values="cell",
                                   aggfunc="first").add_suffix(suffix)
        if scheme == "family":
            added = scored.pivot_table(index=["category", "type", "task"], columns="label", values="added cell",
                                       aggfunc="first")
            table = table.join(added.add_suffix(" added"))
        controls = scored.drop_duplicates("task").set_index("task")
        table.insert(0, f"best control{suffix}", [
            f"{controls.at[t, 'best_control']}{' shortcut' if controls.at[t, 'is_flagged'] else ''}"
            if controls.at[t, "best_control"] else "\u2013" for t in table.index.get_level_values("task")])
        tables.append(table)
    table = pd.concat(tables, axis=1) if len(tables) > 1 else tables[0]
    ordered = [c for c in table.columns if c.startswith("best control")]
    table = table[ordered + sorted((c for c in table.columns if c not in ordered), key=str)]
    return table.fillna("\u2013").reset_index().rename_axis(columns=None)


def report_sections(results: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, pd.DataFrame | None]]:
    """The report's sections, each named by its fold scheme, as (its runs' rows, their family-fold rows beside or
    None): "paper folds" (runs scored under paper folds) and "family folds only" (runs scored under family folds
    alone, ranked only against each other). Tables (`category_tables`) and figures (`write_report`) follow them."""
    schemes = by_scheme(results)
    paper, family = schemes.get("paper"), schemes.get("family")
    sections: dict[str, tuple[pd.DataFrame, pd.DataFrame | None]] = {}
    if paper is not None:
        beside = None if family is None else family[family["label"].isin(set(paper["label"]))]
        sections["paper folds"] = (paper, beside if beside is not None and len(beside) else None)
    if family is not None:
        alone = family if paper is None else family[~family["label"].isin(set(paper["label"]))]
        if len(alone):
            sections["family folds only"] = (alone, None)
    return sections


def category_tables(results: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The category tables by section (`report_sections`); see `category_table`."""
    return {name: _section(own, beside) for name, (own, beside) in report_sections(results).items()}


def category_table(results: pd.DataFrame) -> pd.DataFrame:
    """Models × (categories, task types): mean ± std over task AUCs, the paper's table, with each model's mean lift
    over the best control and, with family-fold results beside, the family-fold AUC and lift, added over names and
    understanding (`understanding_rows`), each with its 95% interval. Every score column names its fold scheme.

    Means follow `genebench.results.summarised_rows` (one vote per multi-label parent, incomplete tasks out). The
    first section of `category_tables`: the runs scored under paper folds, else those under family folds. Each
    model's rank (complete runs of one data revision only), task count per scheme, mean coverage and, for an
    unranked run, why: ranked runs come first, by rank.
    """
    return next(iter(category_tables(results).values()))


def _section(own: pd.DataFrame, family: pd.DataFrame | None) -> pd.DataFrame:
    """`category_table` over the runs of `own` (one fold scheme), with `family`'s scores beside when given."""
    scheme = str(own["scheme"].iat[0]) if "scheme" in own else "paper"
    scored = main_scores(own)
    summary = summary_table(scored.assign(model=scored["label"]))
    table = summary.pivot_table(index="model", columns="group", values="cell", aggfunc="first")
    order = [c for c in (*CATEGORIES, *sorted(set(summary["group"]) - set(CATEGORIES))) if c in table.columns]
    overall = vote_means(summarised_rows(scored), ["label"], ("mean", "lift")).set_index("label")
    ranking = [s for s in run_standings(own) if s.run in table.index]
    table = table.loc[[s.run for s in ranking], order]
    runs = [s.run for s in ranking]
    folds = f"({scheme} folds)"
    columns = {f"rank {folds}": [s.rank if s.rank else "–" for s in ranking],
               f"AUC {folds}": [score_cell(overall.at[r, "mean"], overall.at[r, "mean_std"],
                                           int(overall.at[r, "n_votes"])) if r in overall.index else "–" for r in runs],
               f"lift {folds}": [format_lift(overall.at[r, "lift"]) if r in overall.index else "–" for r in runs],
               f"tasks {folds}": [s.tasks_label for s in ranking]}
    if family is not None:
        columns |= scheme_columns(family, runs)
    elif scheme == "family":
        extra = scheme_columns(own, runs)
        columns |= {k: v for k, v in extra.items() if k.startswith(("added", "understanding"))}
        columns[f"tasks {folds}"] = [f"{label} ({n})" for label, n in
                                     zip(columns[f"tasks {folds}"], extra["tasks (family folds)"])]
    columns |= {"coverage": [f"{s.coverage:.1%}" for s in ranking], "note": [s.note for s in ranking]}
    for i, (name, values) in enumerate(columns.items()):
        table.insert(i, name, values)
    return table.fillna("–").reset_index().rename_axis(columns=None)


def scheme_columns(rows: pd.DataFrame, runs: Sequence[str]) -> dict[str, list[str]]:
    """Per run (display name), over the family-fold `rows`: "AUC (family folds)", "lift (family folds)", "added over
    names (family folds)", "understanding (family folds)" and "tasks (family folds)" (with how many Understanding
    averages), each a formatted cell ("–" where the run has no such score)."""
    scored = summarised_rows(_labelled(rows))
    overall = vote_means(scored, ["label"], ("mean", "lift")).set_index("label")
    names = ("AUC", "lift", "added over names", "understanding", "tasks")
    cells: dict[str, list[str]] = {f"{name} (family folds)": [] for name in names}
    for run in runs:
        mine = scored[scored["label"] == run]
        known = run in overall.index
        kept = understanding_rows(mine)
        cells["AUC (family folds)"].append(score_cell(overall.at[run, "mean"], overall.at[run, "mean_std"],
                                                      int(overall.at[run, "n_votes"])) if known else "–")
        cells["lift (family folds)"].append(format_lift(overall.at[run, "lift"]) if known else "–")
        cells["added over names (family folds)"].append(format_added(*added_summary(mine)))
        cells["understanding (family folds)"].append(format_added(*added_summary(kept)))
        cells["tasks (family folds)"].append(
            f"{mine['task'].nunique()} scored, {kept['task'].nunique()} in understanding" if known else "–")
    return cells


def understanding_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The family-fold rows Understanding averages: tasks scored with added over names on which no control (name,
    identity or random vectors) reaches `SHORTCUT_AUC` under family folds; `understanding_left_out` says why the
    others are out."""
    return rows[rows["added"].notna() & ~rows["is_flagged"].astype(bool)]


def understanding_left_out(rows: pd.DataFrame) -> list[list[str]]:
    """[task, why] for each task of the family-fold `rows` (a results table) that Understanding leaves out: a control
    solves it under family folds, family folds cannot score it, or it has no added over names (a train-test task)."""
    if rows.empty:
        return []
    out = {}
    for row in rows.drop_duplicates("task").itertuples():
        if row.skipped is not None and row.skipped == row.skipped:
            out[row.task] = f"not scorable under family folds: {str(row.skipped).split(';')[0]}"
        elif row.is_flagged:
            control, score = str(row.best_control).split(" ")
            out[row.task] = f"{control} control {score} \u2265 {SHORTCUT_AUC} under family folds"
        elif row.added != row.added and isinstance(row.added_skipped, str):
            out[row.task] = f"no added over names: {row.added_skipped}"
    return [[task, why] for task, why in sorted(out.items())]


def understanding_note(results: pd.DataFrame) -> str:
    """Lines naming the tasks understanding (family folds) leaves out and why (`understanding_left_out`), the first
    5, then the names-only reference (`names_only_note`); "" without family-fold results."""
    family = results[results["scheme"] == "family"] if "scheme" in results else results.iloc[:0]
    out = understanding_left_out(family)
    lines = [f"\nunderstanding (family folds) leaves out {counted(len(out), 'task')}"
             f"{', the first 5' if len(out) > 5 else ''}:"] if out else []
    lines += [fit_line(f"  {task}: {why}") for task, why in out[:5]]
    if reference := names_only_note(family):
        lines += ["", *reference]
    return "\n".join(lines)


def understanding_line(family: pd.DataFrame) -> str:
    """ "understanding (family folds): +0.028 [+0.023, +0.032] over 101 tasks; 23 left out (…; `report` names
    them)" for the family-fold `family` rows of one run; "" without them."""
    scored = summarised_rows(family) if len(family) else family
    kept = understanding_rows(scored)
    if kept.empty:
        return ""
    left = family["task"].nunique() - kept["task"].nunique()
    return (f"understanding (family folds): {format_added(*added_summary(kept))} over "
            f"{counted(kept['task'].nunique(), 'task')}; {left} left out (a control solves them, family folds cannot "
            "split them or they have no added over names; `report` names them)")


def names_only_note(family: pd.DataFrame) -> list[str]:
    """The names-only reference measured on the data of the family-fold `family` rows (`names_only_reference`), as
    screen lines; [] when none was measured on that data. Understanding means something where it clears it."""
    lines: list[str] = []
    for data_hash in sorted(set(family["data_hash"].dropna())) if len(family) else ():
        if (reference := names_only_reference(data_hash)) is not None:
            lines += [fit_line(part) for part in reference.lines()]
    return lines


def printed_tables(results: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The category tables split for the screen (`MAX_LINE`), each with its title naming its fold scheme: per
    section of `category_tables`, the overall scores, the family-fold scores when there are any, the categories and
    the task types."""
    printed = []
    for section, table in category_tables(results).items():
        scheme = "family" if section.startswith("family") else "paper"
        overall = ["model", *(c for c in table.columns if c.endswith(f"({scheme} folds)") and
                              not c.startswith(("added", "understanding"))), "coverage", "note"]
        family = [c for c in table.columns if c.endswith("(family folds)") and c not in overall]
        groups = [c for c in table.columns if c not in overall + family and c != "model"]
        categories = [c for c in groups if c in CATEGORIES]
        types = [c for c in groups if c not in CATEGORIES]
        beside = "family folds beside" if scheme == "paper" else "added over names and understanding"
        for title, columns in ((f"{section}: overall", overall), (f"{section}: {beside}", family),
                               (f"{section}: AUC ({scheme} folds) by category", categories),
                               (f"{section}: AUC ({scheme} folds) by task type", types)):
            if columns and columns != ["model"]:
                printed.append((title, table[list(dict.fromkeys(["model", *columns]))]))
    return printed


def paper_table(results: pd.DataFrame) -> pd.DataFrame:
    """What `run` prints, the paper's table: per category and per task type, for each fold scheme (columns named
    "paper …" and "family …") the number of tasks averaged, the mean ± std AUC and the lift; under family folds also
    added over names with its 95% interval; then the coverage."""
    blocks = []
    for scheme, rows in by_scheme(results).items():
        summary = summary_table(rows)
        block = summary.set_index(["by", "group"])
        cells = {f"{scheme} tasks": block["n_tasks"], f"{scheme} AUC": block["cell"],
                 f"{scheme} lift": block["lift"].map(format_lift)}
        if scheme == "family":
            scored = summarised_rows(rows)
            cells["added over names (family)"] = pd.Series(
                [format_added(*added_summary(scored[scored[by] == group])) for by, group in block.index],
                index=block.index)
        blocks.append(pd.DataFrame({**cells, "coverage": block["coverage"].map("{:.1%}".format)}))
    if not blocks:  # nothing left to summarise (e.g. --exclude-flagged with every task flagged)
        return pd.DataFrame(columns=["by", "group", "paper tasks", "paper AUC", "paper lift", "coverage"])
    table = blocks[0]
    for block in blocks[1:]:
        table = table.join(block.drop(columns=["coverage"]), how="outer")
    table = table[[c for c in table.columns if c != "coverage"] + ["coverage"]]
    for column in [c for c in table.columns if c.endswith(" tasks")]:  # a count, "–" where the scheme has none
        table[column] = [int(v) if pd.notna(v) else "\u2013" for v in table[column]]
    return table.fillna("\u2013").reset_index()


def category_means(results: pd.DataFrame, value: str = "mean") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Three frames, models × categories: the mean, the std and the number of tasks of the main score (or of
    another per-task column, `value`), by `summarised_rows`' rule."""
    return category_grid(summarised_rows(main_scores(results)), "label", value)


def category_grid(scores: pd.DataFrame, row: str, value: str = "mean") -> tuple[pd.DataFrame, pd.DataFrame,
                                                                                 pd.DataFrame]:
    """Mean, std and task count of `scores[value]` per (`row`, category), a multi-label parent and its derived
    labels counting as one vote (`vote`, when `scores` has it): three frames, rows in first-seen order and
    categories in the paper's order."""
    scores = scores if "vote" in scores else scores.assign(vote=scores["task"])
    table = vote_means(scores, [row, "category"], (value,)).set_index([row, "category"])
    columns = [c for c in CATEGORIES if c in set(scores["category"])]
    rows = list(dict.fromkeys(scores[row]))
    means, stds, counts = (table[c].unstack().reindex(index=rows, columns=columns)
                           for c in (value, f"{value}_std", "n_tasks"))
    return means, stds, counts


def _model_labels(standing: Sequence[Standing], labels: list[str]) -> list[str]:
    """Display names for figures: an unranked run says why ("… (partial: 2 of 132 tasks)")."""
    notes = {s.run: s.note.split(",")[0] for s in standing}
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
    """A models × categories heatmap of mean AUC (PNG and SVG), ranked runs first, and the best control's mean over
    the first model's tasks as a last, hatched row; paper folds when the results hold both schemes."""
    scheme, rows = next(iter(by_scheme(results).items()), ("paper", results))
    means, _, counts = category_means(rows)
    standing = run_standings(rows)
    order = [s.run for s in standing if s.run in means.index]
    controls = category_means(rows[rows["label"] == order[0]], "best_control_score")[0] if order else None
    figure = category_heatmap(means.loc[order], counts.loc[order], _model_labels(standing, order), controls=controls,
                              scheme=scheme)
    return save_figure(figure, path)


def category_heatmap(means: pd.DataFrame, counts: pd.DataFrame, labels: Sequence[str],
                     controls: pd.DataFrame | None = None, *, scheme: str = "paper"):
    """The one models × categories figure: mean ROC AUC per cell, annotated with its value and task count.

    Args:
        means: models × categories mean AUC (NaN: no task).
        counts: the number of tasks behind each cell.
        labels: one row label per model.
        controls: one row, categories as `means`: the best control's mean over the same tasks, drawn last and
            hatched (default: none).
        scheme: the fold scheme the scores come from, named in the title.

    Returns:
        A matplotlib `Figure` (no pyplot state), for `save_figure`.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    if controls is not None:
        means = pd.concat([means, controls.set_axis(["best control"])])
        counts = pd.concat([counts, counts.iloc[:1].set_axis(["best control"])])
        labels = [*labels, "best control (hatched)"]
    width = max(8.0, 2.0 * means.shape[1] + 0.1 * max(len(label) for label in labels) + 2.5)
    figure = Figure(figsize=(width, max(3.5, 0.75 * means.shape[0] + 2.2)), layout="constrained")
    axes = figure.add_subplot()
    values = means.to_numpy(dtype=float)
    image = axes.imshow(values, cmap="viridis", vmin=0.5, vmax=1.0, aspect="auto")
    if controls is not None:
        axes.add_patch(Rectangle((-0.5, len(values) - 1.5), values.shape[1], 1, fill=False, hatch="//",
                                 edgecolor="white", lw=0))
    axes.set_xticks(range(means.shape[1]), [c.replace(" ", "\n") for c in means.columns], fontsize=11)
    axes.set_yticks(range(means.shape[0]), labels, fontsize=11)
    for (row, col), value in np.ndenumerate(values):
        if np.isfinite(value):
            axes.text(col, row, f"{value:.3f}\nn={int(counts.iloc[row, col])}", ha="center", va="center",
                      fontsize=11, color="white" if value < 0.8 else "black",
                      bbox={"facecolor": "black" if value < 0.8 else "white", "alpha": 0.6, "lw": 0}
                      if controls is not None and row == len(values) - 1 else None)
    figure.colorbar(image, ax=axes).set_label("mean ROC AUC over the category's tasks", fontsize=11)
    axes.set_title(f"Mean ROC AUC by category, {scheme} folds (n: tasks per cell)", fontsize=12)
    return figure


@plain_text
def plot_categories(results: pd.DataFrame, path: Path) -> list[Path]:
    """Mean AUC ± std over tasks per category, each bar labelled with its value and task count, and beside it the
    mean best control over the same tasks (hatched); PNG and SVG. Paper folds when the results hold both schemes.

    One model: the headline figure (`headline_figure`: both schemes and added over names). Several: one panel per
    category, one bar per model. Values sit right of the error bars; a bar over one task has no error bar.
    """
    schemes = by_scheme(results)
    if len(set(_labelled(results)["label"])) == 1:
        return save_figure(headline_figure(schemes), path)
    scheme, rows = next(iter(schemes.items())) if schemes else ("paper", results)
    means, stds, counts = category_means(rows)
    controls = category_means(rows, "best_control_score")[0] if "best_control_score" in rows else means * np.nan
    standing = run_standings(rows)
    order = [s.run for s in standing if s.run in means.index]  # ranked first, then the others
    means, stds, counts, controls = means.loc[order], stds.loc[order], counts.loc[order], controls.loc[order]
    figure = category_bars(means, stds, counts, controls, _model_labels(standing, order),
                           title=f"Gene benchmark by category ({scheme} folds)")
    return save_figure(figure, path)


def axis_start(values: np.ndarray) -> tuple[float, str]:
    """Where an AUC axis starts, and what its label adds: 0.5 (chance), or lower, said, when a value is below it.

    Examples:
        >>> axis_start(np.array([0.62, 0.9]))
        (0.5, '')
        >>> axis_start(np.array([0.43, 0.9]))
        (0.4, '; the axis starts at 0.4, below chance')
    """
    lowest = float(np.nanmin(np.r_[values, 1.0]))
    if lowest >= 0.5:
        return 0.5, ""
    start = float(np.floor(lowest * 10 - 1e-9) / 10)
    return start, f"; the axis starts at {start:g}, below chance"


def metric_label(results: pd.DataFrame) -> str:
    """The axis label of the main scores in `results`: "ROC AUC", naming `auc_per_gene` where some tasks use it."""
    main = results.loc[results["is_main"].astype(bool), "metric"]
    return "ROC AUC" + (" (PerturbQA tasks: auc_per_gene, per read-out gene)" if (main == "auc_per_gene").any()
                        else "")


def headline_figure(schemes: dict[str, pd.DataFrame]):
    """One model's headline: per category, its mean AUC under paper folds and under family folds, each beside the
    best control's mean over the same tasks (hatched), and added over names (family folds) with its 95% interval.

    Args:
        schemes: one model's results by fold scheme (`by_scheme`).

    Returns:
        A matplotlib `Figure` (no pyplot state), for `save_figure`.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    frames = {}
    for scheme, rows in schemes.items():
        means, stds, counts = (frame.iloc[0] for frame in category_means(rows))
        controls = category_means(rows, "best_control_score")[0].iloc[0] if "best_control_score" in rows \
            else means * np.nan
        frames[scheme] = [means, stds, counts, controls]
    categories = [c for c in CATEGORIES if any(c in frame[0].index for frame in frames.values())]
    family = summarised_rows(main_scores(schemes["family"])) if "family" in schemes else None
    added = {c: added_summary(family[family["category"] == c]) for c in categories} if family is not None else {}
    values = np.concatenate([frame[i].reindex(categories).to_numpy(float) for frame in frames.values()
                             for i in (0, 3)])
    low, note = axis_start(values)
    height = 1.6 + 0.9 * len(categories)
    figure = Figure(figsize=(12.5, height))
    figure.subplots_adjust(left=0.17, right=0.98, top=1 - 0.75 / height, bottom=0.8 / height, wspace=0.08)
    auc, gain = figure.subplots(1, 2, sharey=True, width_ratios=[2.2, 1] if added else [2.2, 0.01])
    y = np.arange(len(categories))[::-1].astype(float)
    bar = 0.8 / (2 * len(frames))
    for k, (means, stds, counts, controls) in enumerate(frames.values()):
        color = f"C{k}"
        for j, (value, spread, n, control) in enumerate(zip(*(f.reindex(categories).to_numpy(float) for f in
                                                                (means, stds, counts, controls)))):
            row = y[j] + 0.4 - bar * (2 * k + 0.5)
            if np.isfinite(value):
                auc.barh(row, value - low, left=low, height=bar, color=color,
                         xerr=spread if n > 1 else None, capsize=2)
                auc.text(value + (spread if n > 1 else 0) + 0.005, row, f"{value:.3f}  n={int(n)}", va="center",
                         fontsize=7)
            if np.isfinite(control):
                auc.barh(row - bar, control - low, left=low, height=bar, color="white", edgecolor=color,
                         hatch="////", lw=0.6)
                auc.text(control + 0.005, row - bar, f"{control:.3f}", va="center", fontsize=7, color="0.35")
    auc.axvline(0.5, color="grey", lw=0.8, ls="--")
    auc.set_xlim(low, 1.1)
    auc.set_xticks([t for t in np.arange(0.0, 1.01, 0.1) if t >= low - 1e-9])
    auc.set_yticks(y, categories, fontsize=9)
    auc.set_xlabel(f"{metric_label(pd.concat(schemes.values()))}, mean ± std over the category's n tasks "
                   f"(dashed: chance{note})", fontsize=8)
    if added:
        for row, category in zip(y, categories):
            mean, lowest, highest = added[category]
            if np.isfinite(mean):
                # the interval as drawn, whether or not it holds the mean (a percentile interval need not)
                gain.plot([lowest, highest], [row, row], color="C1", marker="|", markersize=8)
                gain.plot([mean], [row], "o", color="C1")
                gain.text(highest, row + 0.18, format_added(mean, lowest, highest), fontsize=7, ha="right")
        gain.axvline(0, color="grey", lw=0.8, ls="--")
        gain.set_xlabel("added over names (family folds), 95% interval", fontsize=8)
    else:
        gain.set_axis_off()
    handles = [Patch(color=f"C{k}", label=f"{scheme} folds") for k, scheme in enumerate(frames)]
    handles.append(Patch(facecolor="white", edgecolor="0.45", hatch="////", label="best control, same tasks"))
    figure.legend(handles=handles, loc="upper right", ncols=len(handles), fontsize=8, frameon=False)
    model = str(_labelled(next(iter(schemes.values())))["label"].iat[0])
    figure.suptitle(f"{model}: by category, {' and '.join(f'{s} folds' for s in frames)}", x=0.01,
                    y=1 - 0.1 / height, ha="left", va="top", fontsize=11)
    return figure


def category_bars(means: pd.DataFrame, stds: pd.DataFrame, counts: pd.DataFrame, controls: pd.DataFrame,
                  labels: Sequence[str], *, title: str):
    """The bar figure: models × categories mean AUC ± std with the best control's mean beside each bar (hatched).

    Args:
        means, stds, counts: models × categories mean AUC, its std and the number of tasks.
        controls: models × categories mean best-control AUC over the same tasks (NaN: none).
        labels: one label per model.
        title: the figure's title.

    Returns:
        A matplotlib `Figure` (no pyplot state), for `save_figure`.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    models, categories = list(labels), list(means.columns)
    low, note = axis_start(np.r_[(means - stds).to_numpy().ravel(), controls.to_numpy().ravel()])
    if len(models) == 1:
        panels = [(None, categories, *(frame.iloc[0].to_numpy() for frame in (means, stds, counts, controls)))]
    else:
        panels = [(c, models, *(frame[c].to_numpy() for frame in (means, stds, counts, controls))) for c in categories]
    rows = max(len(panel[1]) for panel in panels)
    height = 1.1 + len(panels) * (0.45 + 0.45 * rows)
    left = 0.3 + 0.075 * max(len(label) for label in (*models, *categories))  # inches for the 8-point labels
    figure = Figure(figsize=(left + 7.5, height))
    figure.subplots_adjust(left=left / (left + 7.5), right=0.97, top=1 - 0.75 / height, bottom=0.6 / height,
                           hspace=0.45 * len(panels) / max(height - 1.35, 1))  # fixed margins: no layout engine
    axes = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (name, names, values, errors, ns, best) in zip(axes, panels):
        y = np.arange(len(names))[::-1].astype(float)
        errors = np.where(ns > 1, errors, np.nan)  # one task: no spread to show
        ax.barh(y + 0.18, values - low, left=low, xerr=errors, height=0.36, capsize=2,
                color=[f"C{i}" for i in range(len(names))] if name else "C0")
        ax.barh(y - 0.18, best - low, left=low, height=0.36, color="white", edgecolor="0.45", hatch="////", lw=0.6)
        for row, value, error, n, control in zip(y, values, errors, ns, best):
            if np.isfinite(value):
                ax.text(value + np.nan_to_num(error) + 0.006, row + 0.18, f"{value:.3f}  n={int(n)}", va="center",
                        ha="left", fontsize=7)
            if np.isfinite(control):
                ax.text(control + 0.006, row - 0.18, f"{control:.3f}", va="center", ha="left", fontsize=7,
                        color="0.35")
        ax.set_yticks(y, names, fontsize=8)
        if name:
            ax.set_title(name, loc="left", fontsize=10)
        ax.axvline(0.5, color="grey", lw=0.8, ls="--")
    axes[-1].set_xlim(low, 1.12)
    axes[-1].set_xticks([t for t in np.arange(0.0, 1.01, 0.1) if low <= t <= 1.0])
    axes[-1].set_xlabel(f"ROC AUC, mean ± std over the category's n tasks (dashed: chance{note})")
    figure.legend(handles=[Patch(color="C0", label="model"),
                           Patch(facecolor="white", edgecolor="0.45", hatch="////", label="best control, same tasks")],
                  loc="upper right", ncols=2, fontsize=8, frameon=False)
    figure.suptitle(title + ("" if len(models) > 1 else f": {models[0]}"), x=0.01, y=1 - 0.1 / height, ha="left",
                    va="top")
    return figure


def save_figure(figure, path: Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write a matplotlib figure as `path` with each suffix in `formats`, atomically; close it if pyplot made it."""
    import io

    written = []
    for suffix in formats:
        buffer = io.BytesIO()
        options = {"pil_kwargs": {"compress_level": 1}} if suffix == "png" else {}  # fast zlib: a few % larger
        figure.savefig(buffer, format=suffix, dpi=150, **options)
        written.append(write_atomic(path.with_suffix(f".{suffix}"), buffer.getvalue()))
    if figure.canvas.manager is not None:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return written



def coverage_line(embeddings: GeneEmbeddings, n_genes: int) -> str:
    """How many of the genes asked for got a vector, and why the others did not."""
    missing = sum(len(v) for v in embeddings.missing.values())
    reasons = ", ".join(f"{k} {len(v)}" for k, v in embeddings.missing.items())
    return (f"encoded {len(embeddings.symbols)} of {n_genes} genes ({len(embeddings.symbols) / max(n_genes, 1):.1%})"
            + (f"; {missing} without a vector: {reasons}" if missing else ""))


def descriptions_line(counts: dict[str, int]) -> str:
    """ "descriptions: 13017 full (65.4%), 6896 name only (34.6%), 0 missing".

    Examples:
        >>> descriptions_line({"full": 3, "name_only": 1, "missing": 0})
        'descriptions: 3 full (75.0%), 1 name only (25.0%), 0 missing (0.0%)'
    """
    total = max(sum(counts.values()), 1)
    return "descriptions: " + ", ".join(f"{counts[key]} {label} ({counts[key] / total:.1%})" for key, label in
                                         (("full", "full"), ("name_only", "name only"), ("missing", "missing")))


SCREEN_NAME = 40
"""The widest model name a table on screen shows whole; a longer one keeps its start and end (files keep it all)."""


def screen_names(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with model names over `SCREEN_NAME` characters shortened for the screen, start and end kept.

    Examples:
        >>> screen_names(pd.DataFrame({"model": ["org/" + "x" * 50 + "-v2"]}))["model"].str.len().tolist()
        [40]
    """
    if "model" not in table:
        return table
    short = [name if len(name) <= SCREEN_NAME else f"{name[:17]}\u2026{name[-(SCREEN_NAME - 18):]}"
             for name in table["model"].astype(str)]
    return table.assign(model=short)


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
    sections = {f"categories, {section}": table for section, table in category_tables(summarised).items()}
    tables = {**sections, "tasks": per_task_table(results)}
    written = []
    for name, table in tables.items():
        stem = "categories" if name == next(iter(tables)) else name.replace(", ", "_").replace(" ", "_")
        markdown = markdown_table(table)
        for suffix, text in ((".md", markdown), (".csv", table.to_csv(index=False))):
            written.append(write_atomic(out / f"{stem}{suffix}", text))
    figures = {}  # each section drawn over its own runs: the first as heatmap and categories, the next suffixed
    for k, (section, (own, beside)) in enumerate(report_sections(summarised).items()):
        rows, suffix = pd.concat([own, beside]) if beside is not None else own, "_" + section.replace(" ", "_")
        stems = [f"{kind}{suffix if k else ''}" for kind in ("heatmap", "categories")]
        written += plot_heatmap(rows, out / stems[0]) + plot_categories(rows, out / stems[1])
        figures[section] = stems
    written.append(write_atomic(out / "report.html", _html(tables, figures)))
    return written


def _html(tables: dict[str, pd.DataFrame], figures: dict[str, list[str]]) -> str:
    images = "".join(f"<img src='{stem}.svg' alt='{kind} by category, {html.escape(section)}'>"
                     for section, stems in figures.items() for stem, kind in zip(stems, ("heatmap of mean AUC",
                                                                                        "mean AUC")))
    sections = "".join(f"<h2>{html.escape(name)}</h2>{table.to_html(index=False, escape=True, border=0)}"
                       for name, table in tables.items())
    return ("<!doctype html><meta charset='utf-8'><title>genebench report</title><style>body{font-family:sans-serif;"
            "margin:2em}table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid #ddd;"
            f"text-align:left}}</style><h1>genebench report</h1>{images}{sections}")


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
    scheme: str = "paper"
    family: list[str] = field(default_factory=list)

    def to_text(self) -> str:
        """A short human-readable summary."""
        lines = [
            *(f"{name}: {s.tasks_label} tasks ({self.scheme} folds), coverage {s.coverage:.1%}"
              + (f" ({s.note})" if s.note else "")
              for name, s in zip("AB", self.standings)),
            f"A = {self.a}, B = {self.b}: {self.n_tasks} shared tasks ({self.scheme} folds)",
            f"mean AUC difference ({self.scheme} folds, A - B, one vote per multi-label parent): "
            f"{self.mean_difference:+.4f}  95% bootstrap CI [{self.ci_low:+.4f}, "
            f"{self.ci_high:+.4f}]",
            f"A wins {self.wins}, ties {self.ties} (|diff| < {TIE}), loses {self.losses}",
            f"mean lift over the best control ({self.scheme} folds): A {format_lift(self.mean_lift_a)}, "
            f"B {format_lift(self.mean_lift_b)}",
            *self.family,
            "", "tasks where they differ most:", self.largest.to_markdown(index=False, floatfmt=".3f"),
        ]
        return "\n".join(lines)


BOOT_MEMORY = 1 << 30
"""Most bytes a bootstrap may hold (its resampled means, and one block of resample indices at a time)."""
_BOOT_BLOCK = 1 << 16


def check_boot_memory(n_boot: int, n_tasks: int) -> None:
    """Refuse a bootstrap whose resamples would not fit in `BOOT_MEMORY`, before anything is drawn."""
    needed = 8 * n_boot + 16 * min(n_boot, _BOOT_BLOCK) * n_tasks
    if needed > BOOT_MEMORY:
        most = (BOOT_MEMORY - 16 * _BOOT_BLOCK * n_tasks) // 8
        raise ResultsError(f"--n-boot {n_boot}: needs about {needed / 2**30:.1f} GiB over {n_tasks} tasks, expected at "
                           f"most {BOOT_MEMORY / 2**30:.0f} GiB; pass --n-boot {most} or fewer (10000 is plenty for a "
                           "95% interval).")


def compare(results: pd.DataFrame, a: str, b: str, *, n_boot: int = 10_000, top: int = 10, seed: int = 0) -> Comparison:
    """Paired comparison of models `a` and `b` (names as shown in reports) on their shared tasks, with each one's
    mean lift over the best control. Pass `drop_flagged(results)` to leave out shortcut-solvable tasks, and
    `select_scheme(results, folds)` to compare under one fold scheme.

    The AUC comparison is on the paper folds when `results` hold both schemes; with family-fold results, the
    comparison adds each model's family-fold AUC and added over names, and their paired difference (`family_lines`).
    Means are over votes (a multi-label parent and its derived labels count once, as in every summary); the AUC
    difference's confidence interval is a percentile bootstrap over votes with `np.random.default_rng(seed)`.
    """
    if a == b:
        raise ResultsError(f"expected two different models, found '{a}' as both --a and --b; name another "
                           "model as --b.")
    schemes = by_scheme(results)
    scheme, primary = next(iter(schemes.items())) if schemes else ("paper", results)
    scored = main_scores(primary)
    known = sorted(set(scored["label"]))
    for name in (a, b):
        if name not in known:
            raise ResultsError(f"model '{name}' has no scored results here; models found: {known}.")
    wide = scored.pivot_table(index="task", columns="label", values="mean", aggfunc="first")[[a, b]].dropna()
    if wide.empty:
        raise ResultsError(f"models '{a}' and '{b}' share no scored task; run both on the same tasks.")
    lifts = scored.pivot_table(index="task", columns="label", values="lift", aggfunc="first", dropna=False)
    lifts = lifts.reindex(index=wide.index, columns=[a, b])
    shared = summarised_rows(scored[scored["task"].isin(wide.index) & scored["label"].isin([a, b])])
    mean_lift = vote_means(shared, ["label"], ("lift",)).set_index("label")["lift"]
    diff = (wide[a] - wide[b]).to_numpy(dtype=np.float64)
    parent = scored.drop_duplicates("task").set_index("task")["parent"].reindex(wide.index)
    votes = pd.Series(diff, index=wide.index).groupby(parent.where(parent.notna(), wide.index).to_numpy()).mean()
    per_vote = votes.to_numpy(dtype=np.float64)  # one vote per multi-label parent, as every summary
    check_boot_memory(n_boot, len(per_vote))
    rng = np.random.default_rng(seed)
    boots = np.concatenate([per_vote[rng.integers(0, len(per_vote), size=(size, len(per_vote)))].mean(axis=1)
                            for size in (min(_BOOT_BLOCK, n_boot - start) for start in range(0, n_boot, _BOOT_BLOCK))])
    largest = wide.set_axis(["A", "B"], axis=1).assign(**{"lift A": lifts[a], "lift B": lifts[b], "A - B": diff})
    largest = largest.iloc[np.argsort(-np.abs(diff), kind="stable")].head(top)
    return Comparison(
        a=a, b=b, n_tasks=len(diff), mean_lift_a=float(mean_lift.get(a, np.nan)),
        mean_lift_b=float(mean_lift.get(b, np.nan)),
        mean_difference=float(per_vote.mean()),
        ci_low=float(np.quantile(boots, 0.025)), ci_high=float(np.quantile(boots, 0.975)),
        wins=int((diff >= TIE).sum()), ties=int((np.abs(diff) < TIE).sum()), losses=int((diff <= -TIE).sum()),
        largest=largest.reset_index(),
        standings=tuple(next(s for s in run_standings(primary) if s.run == name) for name in (a, b)),
        scheme=scheme, family=family_lines(schemes["family"], a, b) if "family" in schemes else [],
    )


def family_lines(rows: pd.DataFrame, a: str, b: str) -> list[str]:
    """Family folds, on the tasks both models scored there: each one's mean AUC, added over names and understanding
    with 95% intervals, and the paired difference of added over names (draws pair by gene)."""
    scored = summarised_rows(main_scores(rows))
    shared = set(scored.loc[scored["label"] == a, "task"]) & set(scored.loc[scored["label"] == b, "task"])
    scored = scored[scored["task"].isin(shared)]
    if scored.empty:
        return []
    mine = {name: scored[scored["label"] == name].set_index("task").sort_index() for name in (a, b)}
    lines = ["", f"family folds, {counted(len(shared), 'shared task')}:"]
    for letter, name in zip("AB", (a, b)):
        overall = vote_means(mine[name].reset_index(), ["label"], ("mean", "lift")).iloc[0]
        lines.append(f"  {letter}: AUC {overall['mean']:.3f}, lift {format_lift(overall['lift'])}, added over names "
                     f"{format_added(*added_summary(mine[name]))}, understanding "
                     f"{format_added(*added_summary(understanding_rows(mine[name])))}")
    both = mine[a]["added"].notna() & mine[b]["added"].notna()
    if both.any():
        first, second = mine[a][both], mine[b][both]
        draws = added_draws(pd.concat([first, second]).reset_index())
        draws = draws[:len(first)] - draws[len(first):]
        difference = mean_with_ci((first["added"] - second["added"]).to_numpy(float), draws, first["vote"])
        lines.append(f"  added over names, A - B (paired by gene): {format_added(*difference)}")
    return lines
