"""`genebench controls`: score the control baselines on every task of a data folder and store them in it."""

from __future__ import annotations

import argparse
from pathlib import Path

from genebench.cli.options import HelpFormatter
from genebench.controls.table import CONTROLS
from genebench.tasks.metadata import FOLD_SCHEMES

EPILOG = """\
examples:
  genebench controls --data data/                 # after `genebench build --out data/ --no-controls`
  genebench controls --data genebench/snapshot    # refresh the bundled snapshot's controls
  genebench controls --data data/ --scheme family  # rescore them under family folds only
  genebench controls --data data/ --only random --keep-seeds   # add the random seeds the rule asks for

A task on which a control reaches ROC AUC 0.9 is flagged shortcut-solvable; every result then records its lift,
the model's score minus the best control's (see README, "What a score means").
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "controls", help="score the control baselines on a data folder (done by `build` already)", epilog=EPILOG,
        formatter_class=HelpFormatter,
        description=f"Probe the controls ({', '.join(CONTROLS)}; `genebench/controls/table.py`) on every task of "
                    "a built data folder, under each fold scheme, and store their scores and "
                    "held-out predictions there (controls/, listed in its manifest), replacing earlier ones; the data "
                    "revision changes with them. Prints each task's control scores and flags shortcut-solvable tasks.")
    parser.add_argument("--data", type=Path, required=True, metavar="DIR", help="a folder written by `genebench build`")
    parser.add_argument("--only", nargs="+", metavar="CONTROL", choices=list(CONTROLS),
                        help=f"score only these controls (the folder keeps its others): {', '.join(CONTROLS)}")
    parser.add_argument("--scheme", dest="schemes", nargs="+", choices=FOLD_SCHEMES, default=list(FOLD_SCHEMES),
                        metavar="SCHEME",
                        help="fold schemes to score: paper (the paper's folds), family (gene families held out)")
    parser.add_argument("--folds", dest="schemes", nargs="+", choices=FOLD_SCHEMES, help=argparse.SUPPRESS)  # old
    parser.add_argument("--keep-seeds", action="store_true",
                        help="random: keep its stored seeds and add only those the precision rule asks for")
    parser.add_argument("--quiet", action="store_true", help="no progress bars and no table")
    parser.set_defaults(handler=run_controls)


def run_controls(args: argparse.Namespace) -> int:
    from genebench.controls.build import add_controls
    from genebench.controls.table import control_table
    from genebench.wording import counted

    data = add_controls(args.data, names=args.only, schemes=args.schemes, keep_seeds=args.keep_seeds,
                        progress=not args.quiet)
    for scheme in args.schemes:
        table = control_table(data.tasks(scheme))
        if not args.quiet:
            print(f"\n{scheme} folds\n" + table.to_markdown(index=False, floatfmt=".3f"))
        print(f"{scheme} folds: controls for {counted(len(table), 'task')}; "
              f"{counted(int(table['shortcut'].sum()), 'shortcut-solvable task')} (list them with `genebench tasks "
              f"--flagged --scheme {scheme}`)")
    print(f"stored in {args.data}/controls ({data.manifest['controls']['seconds']} s)")
    return 0
