"""The `genebench` command: one module per subcommand, each exposing `register(subparsers)`."""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import sys

from genebench.errors import GenebenchError

_NO_SPACE = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_MODULES = {
    "tasks": "tasks",
    "build": "build",
    "push": "build",
    "encode": "run",
    "run": "run",
    "report": "report",
    "compare": "report",
    "leaderboard": "leaderboard",
    "submit": "leaderboard",
}

DESCRIPTION = """\
genebench: does your model understand genes?

Scores a model's gene representations with linear probes on hundreds of curated gene properties
(genomic properties, regulatory functions, localization, biological processes, protein properties).

Start here:
  genebench run --model sentence-transformers/all-MiniLM-L6-v2 --input description --out results/
  genebench tasks --category localization
  genebench report results/ --out report/
"""


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="genebench", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in dict.fromkeys(_MODULES.values()):
        importlib.import_module(f"genebench.cli.{module}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, and turn genebench errors into one line on stderr."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO, format="%(message)s")
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("genebench: interrupted; finished results are kept, rerun the same command to resume.", file=sys.stderr)
        return 130
    except (GenebenchError, OSError) as exc:
        if args.debug:
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if getattr(exc, "errno", None) in _NO_SPACE:
            message = (f"cannot write, the disk is full or the file too large ({message}); free some space and "
                       "rerun the same command: finished results are kept and the run resumes.")
        print(f"genebench {args.command}: error: {message}", file=sys.stderr)
        return 2
