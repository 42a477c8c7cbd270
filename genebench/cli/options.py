"""Option groups shared by several subcommands, defined once."""

from __future__ import annotations

import argparse
import contextlib
import re

from genebench.constants import ENGINES
from genebench.tasks.metadata import CATEGORIES, TASK_TYPES


def add_data_args(parser: argparse.ArgumentParser) -> None:
    """`--data` and `--hub-revision`: which built data to read (`--data-revision`, the old name of
    `--hub-revision`, still works, unlisted)."""
    group = parser.add_argument_group("data")
    group.add_argument("--data", metavar="DIR_OR_HUB_ID",
                       help="built data folder or Hub dataset id (default: the snapshot bundled with genebench, "
                            "or $GENEBENCH_DATA)")
    group.add_argument("--hub-revision", metavar="REV", help="Hub revision (branch, tag or commit) of --data")
    group.add_argument("--data-revision", dest="hub_revision", help=argparse.SUPPRESS)


def add_task_selection_args(parser: argparse.ArgumentParser) -> None:
    """`--tasks`, `--family`, `--category`, `--type`: which tasks to use (all when none is given)."""
    group = parser.add_argument_group("task selection (filters combine; default: every task)")
    group.add_argument("--tasks", nargs="+", action="extend", metavar="NAME",
                       help="task names, e.g. 'TF vs non-TF' Pathways")
    group.add_argument("--family", nargs="+", action="extend", metavar="FAMILY",
                       help="task families, e.g. humantfs reactome")
    group.add_argument("--category", nargs="+", action="extend", metavar="CATEGORY", choices=CATEGORIES,
                       help=f"task categories: {', '.join(repr(c) for c in CATEGORIES)}")
    group.add_argument("--type", nargs="+", action="extend", metavar="TYPE", choices=TASK_TYPES,
                       help=f"task types: {', '.join(repr(t) for t in TASK_TYPES)}")
    group.add_argument("--no-derived", action="store_true",
                       help="leave out the derived binary tasks (one per label of a multi-label task)")


def add_exclude_flagged_arg(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--exclude-flagged`: leave shortcut-solvable tasks out of summaries."""
    parser.add_argument("--exclude-flagged", action="store_true",
                        help="leave out of summaries the tasks a control baseline solves (ROC AUC >= 0.9: "
                             "shortcut-solvable, see `genebench controls --help`)")


def add_engine_args(parser: argparse.ArgumentParser) -> None:
    """`--engine` and `--ray-address`: where encoding and probing run."""
    group = parser.add_argument_group("engine (docs/scaling.md)")
    group.add_argument("--engine", choices=ENGINES, default="local",
                       help="local: this process; ray: encode on a pool of Ray actors (a GPU each where the cluster "
                            "has GPUs) and run one Ray task per probe; same scores either way")
    group.add_argument("--ray-address", metavar="ADDRESS", default="local",
                       help="with --engine ray: 'local' starts Ray on this machine, 'auto' joins the cluster "
                            "`ray start` runs here, ray://HOST:10001 connects to a remote one")
    group.add_argument("--chunk-size", type=int_at_least(1), metavar="N",
                       help="with --engine ray: genes per Ray Data block, each encoded by one actor and written to "
                            "the cache as one piece (default 1024); lower it for long inputs such as DNA regions")


def open_engine(args: argparse.Namespace) -> contextlib.AbstractContextManager:
    """A context giving the `RayEngine` of `--engine ray` (connected), or None for a local run."""
    if args.engine != "ray":
        given = [f"--ray-address {args.ray_address}"] if args.ray_address != "local" else []
        given += [f"--chunk-size {args.chunk_size}"] if args.chunk_size else []
        if given:
            from genebench.errors import GenebenchError

            raise GenebenchError(f"{given[0]} applies to --engine ray only; add --engine ray.")
        return contextlib.nullcontext()
    from genebench.distributed import RayEngine

    return RayEngine(args.ray_address, **({"chunk_size": args.chunk_size} if args.chunk_size else {}))


def task_selection(args: argparse.Namespace):
    """The `TaskSelection` of the task-selection options."""
    from genebench.catalogue import TaskSelection

    return TaskSelection(tasks=args.tasks, family=args.family, category=args.category, type=args.type,
                         no_derived=args.no_derived)


def selected_tasks(selection, data, scheme: str = "paper") -> list:
    """Task metadata chosen by `selection` (the options' `argparse.Namespace`, or a `TaskSelection`), in registry
    order, with fold scheme `scheme`' controls.

    Raises:
        GenebenchError: a --tasks value that is a category, task family or task type: the option to use instead.
    """
    from genebench.errors import GenebenchError

    if isinstance(selection, argparse.Namespace):
        selection = task_selection(selection)
    kinds = {**{t: "--type" for t in TASK_TYPES}, **{f: "--family" for f in data.families},
             **{c: "--category" for c in CATEGORIES}}
    known = {meta.name for meta in data.tasks(scheme)}
    for name in selection.tasks or ():
        if name not in known and name in kinds:
            what = kinds[name].removeprefix("--").replace("family", "task family").replace("type", "task type")
            raise GenebenchError(f"--tasks '{name}': expected task names, found a {what}; use {kinds[name]} "
                                 f"'{name}' (`genebench tasks {kinds[name]} '{name}'` lists its tasks).")
    return selection.select(data, scheme)


def open_data_from_args(args: argparse.Namespace):
    """The `BenchmarkData` named by `--data` / `--hub-revision`."""
    from genebench.data import open_data

    return open_data(args.data, hub_revision=args.hub_revision)


def int_at_least(minimum: int):
    """An argparse `type` accepting integers >= `minimum`, with a message that says so.

    >>> int_at_least(2)("5")
    5
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, found {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, found {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


_PART = r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*"
_REPO_ID = re.compile(rf"^{_PART}/{_PART}$")


def hub_repo_id(text: str) -> str:
    """An argparse `type` for a Hub repository id, 'org/name' (no path, no '..').

    >>> hub_repo_id("genebench/genebench-results")
    'genebench/genebench-results'
    """
    if len(text) > 96 or not _REPO_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a Hub repository id 'org/name' (letters, digits, '-', '_', "
                                         f"'.'), found {text!r}")
    return text


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's examples as written and shows the defaults that are set."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default not in (None, False, argparse.SUPPRESS) and "default" not in text:
            text += " (default: %(default)s)"
        return text
