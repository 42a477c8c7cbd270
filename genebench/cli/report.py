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
  genebench report results/ results-family/ --scheme family         # family folds only
"""

COMPARE_EPILOG = """\
examples:
  genebench compare results-minilm/ results-esm2/                   # one model in each folder: --a and --b follow
  genebench compare results/ --a sentence-transformers/all-MiniLM-L6-v2 --b random
  genebench compare results-a/ results-b/ --a model-a --b model-b --top 20
  genebench compare paper/ family/ --a model-a --b model-b          # adds family folds and added over names
  genebench compare results-minilm/ --published MPNet               # beside the paper's published scores
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
    _add_scheme_arg(report)
    report.set_defaults(handler=run_report)

    compare = subparsers.add_parser(
        "compare", help="paired comparison of two models over their shared tasks", epilog=COMPARE_EPILOG,
        formatter_class=HelpFormatter,
        description="Mean AUC difference with a bootstrap confidence interval, win/tie/loss counts, and the "
                    "tasks where the two models differ most. With --published, a run (--a, or the only one) beside "
                    "the paper's published scores on each mapped task, with the paper's fold spread and how each "
                    "task relates to the paper's (same, another data release, another protocol).")
    compare.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="results folders")
    compare.add_argument("--a", metavar="MODEL",
                         help="first model (as named in `genebench report`; default: when the folders hold two "
                              "models, the first folder's)")
    compare.add_argument("--b", metavar="MODEL", help="second model (default: the other one)")
    compare.add_argument("--published", nargs="*", metavar="MODEL",
                         help="compare with the paper's published scores (arXiv 2412.04075) of these models (default: "
                              "all 9: MPNet, MTEB-1B, MTEB-7B, Bag of Words, Gene2vec, Geneformer, ScGPT, cellPLM, "
                              "GEARS); shown beside, never ranked with, the run")
    compare.add_argument("--top", type=int_at_least(1), default=10, help="how many most-different tasks to list")
    compare.add_argument("--n-boot", type=int_at_least(1), default=10_000, help="bootstrap resamples")
    add_exclude_flagged_arg(compare)
    _add_scheme_arg(compare)
    compare.set_defaults(handler=run_compare)


def _kept(results, exclude_flagged: bool):
    """`results`, without shortcut-solvable tasks under --exclude-flagged; one line when that leaves nothing."""
    from genebench.errors import ResultsError
    from genebench.results import drop_flagged
    from genebench.tasks.metadata import SHORTCUT_AUC

    if not exclude_flagged:
        return results
    kept = drop_flagged(results)
    if kept.empty:
        raise ResultsError(f"--exclude-flagged: every one of the {results['task'].nunique()} tasks here is "
                           f"shortcut-solvable (a control reaches ROC AUC {SHORTCUT_AUC}), so nothing is left; drop "
                           "--exclude-flagged or add results on other tasks.")
    return kept


def _add_scheme_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--folds", dest="scheme", choices=("paper", "family"), help=argparse.SUPPRESS)  # old name
    parser.add_argument("--scheme", choices=("paper", "family"), default=None,
                        help="only results scored under this fold scheme (default: both schemes found, side by side: "
                             "paper-fold AUC and lift, family-fold AUC and lift, added over names)")


def run_report(args: argparse.Namespace) -> int:
    from genebench.report import select_scheme, write_report
    from genebench.results import load_results

    results = select_scheme(load_results(args.results), args.scheme)
    text = summary_text(results, exclude_flagged=args.exclude_flagged)  # before anything is written
    written = write_report(results, args.out, exclude_flagged=args.exclude_flagged)
    print(text)
    print(f"\nwrote {len(written)} files to {args.out}/ (report.html, tables, heatmap and category figures)")
    return 0


def summary_text(results, *, exclude_flagged: bool = False) -> str:
    """What `report` and `sweep` print: the category tables split for the screen, the shortcut note, the first
    unscored tasks and the unconverged note."""
    from genebench.report import (
        fit_line,
        flagged_note,
        markdown_table,
        printed_tables,
        screen_names,
        unconverged_note,
        understanding_note,
    )

    lines = ["\n\n".join(f"{title}\n{markdown_table(screen_names(table))}"
                         for title, table in printed_tables(_kept(results, exclude_flagged)))]
    if note := flagged_note(results, excluded=exclude_flagged):
        lines.append(note)
    unscored = results[results["metric"].isna()].drop_duplicates(["model", "model_revision", "scheme", "task"])
    if len(unscored):
        lines.append(f"\n{counted(len(unscored), 'task has no score and is', 'tasks have no score and are')} left "
                     "out of the tables"
                     f"{', the first 5' if len(unscored) > 5 else ''}:")
        lines += [fit_line(f"  {row.model} '{row.task}' ({row.scheme} folds): {row.skipped}")
                  for row in unscored.head(5).itertuples()]
    if note := understanding_note(results):
        lines.append(note)
    if note := unconverged_note(results):
        lines.append(note)
    return "\n".join(lines)


def _compare_published(results, args: argparse.Namespace) -> int:
    from genebench.errors import GenebenchError
    from genebench.published.compare import compare_published

    if args.b:
        raise GenebenchError("--published: compares one run with the paper's scores; name the run with --a and "
                             "drop --b.")
    comparisons = compare_published(_kept(results, args.exclude_flagged), args.results, args.published, args.a)
    print("\n\n".join(comparison.to_text() for comparison in comparisons))
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from genebench.report import compare, flagged_note, pair_of_models, select_scheme
    from genebench.results import load_results

    results = select_scheme(load_results(args.results), args.scheme)
    if args.published is not None:
        return _compare_published(results, args)
    a, b = pair_of_models(results, args.a, args.b)
    print(compare(_kept(results, args.exclude_flagged), a, b, n_boot=args.n_boot, top=args.top).to_text())
    note = flagged_note(results, excluded=args.exclude_flagged)
    if note:
        print(note)
    return 0
