"""The `genebench` command: one module per subcommand, each exposing `register(subparsers)`."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import importlib
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator

from genebench.errors import GenebenchError

_NO_SPACE = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_MODULES = {
    "tasks": "tasks",
    "build": "build",
    "push": "build",
    "controls": "controls",
    "encode": "run",
    "run": "run",
    "sweep": "sweep",
    "report": "report",
    "compare": "report",
    "leaderboard": "leaderboard",
    "submit": "leaderboard",
}

_DEBUG_HELP = "show tracebacks and debug logs (before or after the subcommand)"

DESCRIPTION = """\
genebench: does your model understand genes?

Scores a model's gene representations with linear probes on 124 curated gene properties
(genomic properties, regulatory functions, localization, biological processes, protein properties).

Start here:
  genebench run --model sentence-transformers/all-MiniLM-L6-v2 --input description --out results/
  genebench tasks --category localization
  genebench report results/ --out report/
  genebench sweep sweep.yaml --out sweeps/ [--engine ray]   # many models, one report (docs/scaling.md)
"""


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="genebench", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in dict.fromkeys(_MODULES.values()):
        importlib.import_module(f"genebench.cli.{module}").register(subparsers)
    _accept_debug_anywhere(subparsers)
    return parser


def _accept_debug_anywhere(subparsers: argparse._SubParsersAction) -> None:
    """Let `--debug` follow any (sub)subcommand too, as in `genebench run ... --debug`."""
    for sub in dict.fromkeys(subparsers.choices.values()):
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                _accept_debug_anywhere(action)


def _refuse_unknown(parser: argparse.ArgumentParser, argv: list[str], extras: list[str]) -> None:
    """Exit with the (sub)command's usage and one line naming the unknown arguments and the closest option."""
    command = parser
    for token in argv:  # the deepest subcommand named
        actions = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        if actions and token in actions[0].choices:
            command = actions[0].choices[token]
    options = [option for action in command._actions for option in action.option_strings]
    unknown = next((extra.split("=")[0] for extra in extras if extra.startswith("-")), None)
    close = difflib.get_close_matches(unknown, options, n=1, cutoff=0.6) if unknown else []
    command.error(f"unrecognized arguments: {' '.join(extras)}" + (f"; did you mean {close[0]}?" if close else ""))


class _OncePerRecord(logging.Filter):
    """Drop records a library already printed through its own handler (huggingface_hub, transformers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        logger: logging.Logger | None = logging.getLogger(record.name)
        while logger is not None and logger is not logging.root:
            if logger.handlers:
                return False
            logger = logger.parent if logger.propagate else None
        return True


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """Python warnings as one line, without the file and source line they were raised from."""
    print(f"warning: {str(message).splitlines()[0] if str(message) else category.__name__}", file=sys.stderr)


QUIET_LOGGERS = ("matplotlib",)
"""Libraries whose informational lines ("generated new fontManager") show only with --debug."""


def _configure_logging(debug: bool) -> None:
    from genebench.progress import ProgressWriter

    fresh = not logging.root.handlers
    logging.basicConfig(level=logging.DEBUG if debug else logging.INFO, format="%(message)s",
                        handlers=[ProgressWriter(sys.stderr)] if fresh else None)
    for handler in logging.root.handlers if fresh else ():
        handler.addFilter(_OncePerRecord())
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if debug else logging.WARNING)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so it unwinds as Ctrl-C does: files closed, locks released."""


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """While the command runs, SIGTERM raises `Terminated` (on the main thread; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, and turn genebench errors into one line on stderr."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        _refuse_unknown(parser, argv, extras)
    _configure_logging(args.debug)
    try:
        with warnings.catch_warnings(), _terminate_as_interrupt():
            if not args.debug:
                warnings.showwarning = _one_line_warning
            return int(args.handler(args) or 0)
    except Terminated:
        print("genebench: terminated; finished results are kept, rerun the same command to resume.", file=sys.stderr)
        return 128 + signal.SIGTERM
    except BrokenPipeError:  # the reader went away (`genebench tasks | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
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
