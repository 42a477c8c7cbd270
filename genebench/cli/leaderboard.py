"""`genebench leaderboard build` and `genebench submit`: the public scoreboard and how results reach it."""

from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from genebench.cli.options import hub_repo_id
from genebench.errors import MissingSourceError, SubmissionError

if TYPE_CHECKING:  # the leaderboard (and huggingface_hub) load only when a leaderboard command runs
    from genebench.data import BenchmarkData
    from genebench.leaderboard import ModelRun

logger = logging.getLogger(__name__)

BUILD_EPILOG = """\
examples:
  genebench leaderboard build results/ --out site/
  genebench leaderboard build results/ other-results/ --out site/ --data data/
  genebench leaderboard build --from-hub genebench/genebench-results --out site/
"""

SUBMIT_EPILOG = """\
examples:
  genebench submit results/ --repo genebench/genebench-results --dry-run
  genebench submit results/ --repo genebench/genebench-results
  genebench submit results/ --repo my-org/genebench-results --data genebench/genebench-data
"""


def _add_data_args(parser: argparse.ArgumentParser, *, allow_unverified: bool) -> None:
    group = parser.add_argument_group("dataset revision checks")
    group.add_argument(
        "--data",
        metavar="PATH_OR_HUB_ID",
        help="built genebench data the results must match (complete task set and data hash)"
        + (
            "; default: the Hub data the results name, else $GENEBENCH_DATA or the snapshot" if allow_unverified else ""
        ),
    )
    if allow_unverified:
        group.add_argument(
            "--allow-unverified-task-set",
            action="store_true",
            help="skip the task-set and data-revision checks when the data is unavailable "
            "(re-check later with `leaderboard build --data`)",
        )
    parser.add_argument(
        "--endpoint", metavar="URL", help="Hub endpoint (default: $HF_ENDPOINT or https://huggingface.co)"
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `leaderboard` and `submit` subcommands."""
    leaderboard = subparsers.add_parser(
        "leaderboard",
        help="build the static leaderboard page from results folders or the Hub",
        epilog=BUILD_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = leaderboard.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        help="write index.html, assets, figures and per-model files into --out",
        epilog=BUILD_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument(
        "results_dirs", nargs="*", type=Path, metavar="RESULTS_DIR", help="`genebench run --out` folders"
    )
    build.add_argument("--out", type=Path, required=True, help="site folder to write (created if needed)")
    build.add_argument("--from-hub", metavar="REPO", type=hub_repo_id,
                       help="also read every merged submission of this Hub dataset repo")
    _add_data_args(build, allow_unverified=False)
    build.set_defaults(handler=run_build)

    submit = subparsers.add_parser(
        "submit",
        help="validate results and open a pull request on the leaderboard's Hub dataset repo",
        epilog=SUBMIT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    submit.add_argument("results_dir", type=Path, metavar="RESULTS_DIR", help="a `genebench run --out` folder")
    submit.add_argument("--repo", required=True, type=hub_repo_id, metavar="ORG/NAME",
                        help="submissions dataset repo on the Hub")
    submit.add_argument("--dry-run", action="store_true", help="validate only; upload nothing")
    _add_data_args(submit, allow_unverified=True)
    submit.set_defaults(handler=run_submit)


def _check_against_data(data: str | None, runs: list[ModelRun], *, allow_partial: bool) -> None:
    """Check the runs against the data `--data` names, else the Hub data the runs name, else the default: its task
    set and data hash, and each result's controls, lift and shortcut flag recomputed from its stored controls."""
    from genebench.leaderboard import check_controls, check_runs

    opened = _open_expected(data, runs)
    tasks = [meta.name for meta in opened.tasks()]
    check_runs(runs, expected_tasks=tasks, expected_data_hash=opened.data_hash, allow_partial=allow_partial)
    check_controls(runs, opened)


def _open_expected(data: str | None, runs: list[ModelRun]) -> BenchmarkData:
    """The data `--data` names, else the Hub data the runs name, else the default."""
    from genebench.data import open_data

    hub_revision = None
    if data is None:
        named = {(run.provenance.get("hub_id"), run.provenance.get("hub_revision")) for run in runs}
        if len(named) == 1 and next(iter(named))[0]:
            data, hub_revision = next(iter(named))
    try:
        return open_data(data, hub_revision=hub_revision)
    except MissingSourceError as exc:
        raise SubmissionError(
            f"{exc} The task set and data revision cannot be checked: pass --data PATH_OR_HUB_ID with the data the "
            "results were run on, or --allow-unverified-task-set."
        ) from exc


def run_build(args: argparse.Namespace) -> int:
    """Validate every results folder (and merged Hub submissions), then write the site."""
    if not args.results_dirs and not args.from_hub:
        raise SubmissionError(
            "leaderboard build: expected RESULTS_DIR... or --from-hub REPO, found neither; pass at least one."
        )
    from genebench.leaderboard import (
        build_site,
        download_submissions,
        find_figures,
        merge_runs,
        validate_results,
    )

    groups = [validate_results(path) for path in args.results_dirs]
    with tempfile.TemporaryDirectory(prefix="genebench-hub-") as tmp:
        if args.from_hub:
            groups.append(validate_results(download_submissions(args.from_hub, tmp, endpoint=args.endpoint)))
        runs = merge_runs(groups)
        if args.data:
            _check_against_data(args.data, runs, allow_partial=True)
        index = build_site(runs, args.out, figures=find_figures(args.results_dirs))
    logger.info("Leaderboard: %s (open it in a browser, or push --out as a static Space).", index)
    return 0


def run_submit(args: argparse.Namespace) -> int:
    """Validate a results folder, then open one pull request with all its files."""
    from genebench.leaderboard import submit_runs, validate_results

    runs = validate_results(args.results_dir)
    if args.allow_unverified_task_set:
        logger.warning("Skipping the task-set and data-revision checks (--allow-unverified-task-set).")
    else:
        _check_against_data(args.data, runs, allow_partial=False)
    n_results = sum(len(run.results) for run in runs)
    logger.info("Validated %d run(s), %d results: %s.", len(runs), n_results, ", ".join(run.key for run in runs))
    if args.dry_run:
        logger.info("Dry run: nothing uploaded.")
        return 0
    commit = submit_runs(runs, args.repo, endpoint=args.endpoint)
    logger.info("Submitted: %s", commit.pr_url)
    return 0
