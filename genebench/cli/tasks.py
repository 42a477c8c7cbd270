"""`genebench tasks`: list and filter tasks, or show one."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from genebench.cli.options import (
    HelpFormatter,
    add_data_args,
    add_task_selection_args,
    open_data_from_args,
    selected_tasks,
)
from genebench.tasks.metadata import FOLD_SCHEMES, format_control
from genebench.tasks.types import task_type
from genebench.wording import counted

EPILOG = """\
examples:
  genebench tasks                                   # every task, as a table
  genebench tasks --category localization --no-derived
  genebench tasks --show "TF vs non-TF"             # metadata, sizes and label balance
  genebench tasks --flagged --scheme family         # the tasks a control solves under family folds

  genebench tasks "TF vs non-TF"                    # the same: a task's name alone shows it

"family" is the task family (the --family of every command). "shortcut (paper folds)" and "shortcut (family
folds)" name the control that reaches ROC AUC 0.9 on a task under each fold scheme (shortcut-solvable there);
--exclude-flagged in run, report and compare leaves a task flagged under either scheme out of both.
"""
TABLE = ["name", "family", "category", "type", "rows", *(f"shortcut ({s} folds)" for s in FOLD_SCHEMES)]
"""The columns the table shows (csv and json hold every column, parent and best control included)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tasks", help="list and filter tasks, or show one", epilog=EPILOG,
                                   formatter_class=HelpFormatter, description="List the benchmark's tasks.")
    parser.add_argument("name", nargs="?", metavar="NAME", help="a task to show, as --show does")
    add_task_selection_args(parser)
    add_data_args(parser)
    parser.add_argument("--show", metavar="NAME", help="show one task's metadata, sizes and label balance")
    parser.add_argument("--scheme", choices=FOLD_SCHEMES, default="paper",
                        help="fold scheme of --show's folds and controls and of --flagged")
    parser.add_argument("--folds", dest="scheme", choices=FOLD_SCHEMES, help=argparse.SUPPRESS)  # its old name
    parser.add_argument("--flagged", action="store_true",
                        help="only the shortcut-solvable tasks (a control reaches ROC AUC 0.9 under --scheme)")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    data = open_data_from_args(args)
    if args.show or args.name:
        print(describe(data, args.show or args.name, args.scheme))
        return 0
    from genebench.catalogue import TaskList

    tasks = TaskList(meta for meta in selected_tasks(args, data, args.scheme)
                     if not args.flagged or meta.is_shortcut_solvable)
    frame = with_flags(tasks.to_dataframe(), data)
    if args.format == "csv":
        print(frame.to_csv(index=False), end="")
    elif args.format == "json":
        print(frame.to_json(orient="records", indent=2))
    else:
        table = frame.rename(columns={"n_entities": "rows"})[TABLE]
        print(table.fillna("").to_markdown(index=False) if tasks else "no task matches these filters")
        where = f" under {args.scheme} folds" if args.flagged else ""
        print(f"\n{counted(len(tasks), 'shortcut-solvable task' if args.flagged else 'task')}{where}")
    return 0


def with_flags(frame: pd.DataFrame, data) -> pd.DataFrame:
    """`frame` (one row per task, `TaskList.to_dataframe`) with a column per fold scheme, "shortcut (<scheme>
    folds)", naming the control that reaches `SHORTCUT_AUC` there ("name 0.990"), blank where none does."""
    for scheme in FOLD_SCHEMES:
        flags = {meta.name: format_control(meta.best_control) for meta in data.tasks(scheme)
                 if meta.is_shortcut_solvable}
        frame[f"shortcut ({scheme} folds)"] = frame["name"].map(flags) if len(frame) else []
    return frame


def describe(data, name: str, scheme: str = "paper") -> str:
    """A task's metadata with its size, fold sizes (under `scheme`) and label balance."""
    task = data.load_task(name, scheme)
    meta = task.metadata
    lines = [f"{meta.name}", "=" * len(meta.name)]
    for field in ("family", "category", "type", "evaluation", "fold_scheme", "parent", "description", "notes",
                  "source_url", "source_version", "license", "hgnc_version", "incomplete", "family_unscorable"):
        value = getattr(meta, field)
        if value:
            lines.append(f"{field:>15}: {value}")
    if meta.aliases:
        lines.append(f"{'aliases':>15}: {', '.join(meta.aliases)}")
    lines.append(f"{'rows':>15}: {len(task.fold_ids)}  ({scheme} folds: "
                 f"{np.bincount(task.fold_ids[task.fold_ids >= 0]).tolist()})")
    lines.append(f"{'symbols':>15}: {meta.symbol_report}")
    if meta.family_report:
        lines.append(f"{'families':>15}: {meta.family_report}")
    if meta.controls:
        scores = ", ".join(f"{control} {score:.3f}" for control, score in sorted(meta.controls.items()))
        flag = "  SHORTCUT-SOLVABLE: a control alone reaches ROC AUC 0.9" if meta.is_shortcut_solvable else ""
        lines.append(f"{'controls':>15}: {scores} ({scheme} folds){flag}")
    kind = task_type(meta.type)
    if not kind.is_classification:
        lines.append(f"{'target':>15}: mean {task.labels.mean():.3f}, std {task.labels.std():.3f}")
        return "\n".join(lines)
    counts = kind.class_matrix(task.labels, len(meta.label_names)).sum(axis=0)
    lines.append(f"{'labels':>15}:")
    for label, count in sorted(zip(meta.label_names, counts), key=lambda item: -item[1]):
        lines.append(f"{'':>17}{count:>7}  {count / len(task.fold_ids):6.1%}  {label}")
    return "\n".join(lines)
