"""`genebench report` and `genebench compare`: tables and figures over results, and paired comparisons."""

from __future__ import annotations

import argparse
from pathlib import Path

from genebench.cli.options import HelpFormatter, add_exclude_flagged_arg, int_at_least
from genebench.wording import counted

REPORT_EPILOG = """\
examples:
  genebench report results/ --out report/
  genebench report results-minilm/ results-esm2/ --out report/     # several models side by side
"""

COMPARE_EPILOG = """\
examples:
  genebench compare results/ --a sentence-transformers/all-MiniLM-L6-v2 --b random
  genebench compare results-a/ results-b/ --a model-a --b model-b --top 20
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser(
        "report", help="tables (markdown, CSV, HTML) and figures over one or more results folders",
        epilog=REPORT_EPILOG, formatter_class=HelpFormatter,
        description="Per-task and per-category tables and a models x categories heatmap and bar charts. Every model "
                    "shows its task count and coverage; only runs holding every task of one data revision are "
                    "ranked, partial runs are listed after them, unranked and labelled. A model given twice is "
                    "counted once.")
    report.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="results folders")
    report.add_argument("--out", type=Path, default=Path("report"), metavar="DIR", help="report folder")
    add_exclude_flagged_arg(report)
    report.set_defaults(handler=run_report)

    compare = subparsers.add_parser(
        "compare", help="paired comparison of two models over their shared tasks", epilog=COMPARE_EPILOG,
        formatter_class=HelpFormatter,
        description="Mean AUC difference with a bootstrap confidence interval, win/tie/loss counts, and the "
                    "tasks where the two models differ most.")
    compare.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="results folders")
    compare.add_argument("--a", required=True, metavar="MODEL", help="first model (as named in `genebench report`)")
    compare.add_argument("--b", required=True, metavar="MODEL", help="second model")
    compare.add_argument("--top", type=int_at_least(1), default=10, help="how many most-different tasks to list")
    compare.add_argument("--n-boot", type=int_at_least(1), default=10_000, help="bootstrap resamples")
    add_exclude_flagged_arg(compare)
    compare.set_defaults(handler=run_compare)


def run_report(args: argparse.Namespace) -> int:
    from genebench.report import category_table, flagged_note, markdown_table, write_report
    from genebench.results import drop_flagged, load_results

    results = load_results(args.results)
    written = write_report(results, args.out, exclude_flagged=args.exclude_flagged)
    table = category_table(drop_flagged(results) if args.exclude_flagged else results)
    print(markdown_table(table))
    note = flagged_note(results, excluded=args.exclude_flagged)
    if note:
        print(note)
    unscored = results[results["metric"].isna()].drop_duplicates(["model", "revision", "task"])
    if len(unscored):
        listed = "; ".join(f"{row.model} '{row.task}' ({row.skipped})" for row in unscored.head(5).itertuples())
        print(f"\n{counted(len(unscored), 'task has', 'tasks have')} no score and are left out of the tables: {listed}"
              f"{' ...' if len(unscored) > 5 else ''}")
    print(f"\nwrote {len(written)} files to {args.out}/ (report.html, tables, heatmap and category figures)")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from genebench.report import compare, flagged_note
    from genebench.results import drop_flagged, load_results

    results = load_results(args.results)
    print(compare(drop_flagged(results) if args.exclude_flagged else results, args.a, args.b, n_boot=args.n_boot,
                  top=args.top).to_text())
    note = flagged_note(results, excluded=args.exclude_flagged)
    if note:
        print(note)
    return 0
