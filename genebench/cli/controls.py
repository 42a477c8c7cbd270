"""`genebench controls`: score the control baselines on every task of a data folder and store them in it."""

from __future__ import annotations

import argparse
from pathlib import Path

from genebench.cli.options import HelpFormatter

EPILOG = """\
examples:
  genebench controls --data data/                 # after `genebench build --out data/ --no-controls`
  genebench controls --data genebench/snapshot    # refresh the bundled snapshot's controls

controls:
  name       bag-of-words over each gene's HGNC symbol and approved name, probed like any model
  identity   one indicator per gene (pair tasks): what knowing which genes are paired predicts
  random     seeded random vectors of the median model width

A task on which a control reaches ROC AUC 0.9 is flagged shortcut-solvable; every result then records its lift,
the model's score minus the best control's (see README, "What a score means").
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "controls", help="score the control baselines on a data folder (done by `build` already)", epilog=EPILOG,
        formatter_class=HelpFormatter,
        description="Probe the name, identity and random controls on every task of a built data folder and store "
                    "them there as result files listed in its manifest, replacing earlier ones. The data revision "
                    "does not change. Prints each task's control scores and flags shortcut-solvable tasks.")
    parser.add_argument("--data", type=Path, required=True, metavar="DIR", help="a folder written by `genebench build`")
    parser.add_argument("--only", nargs="+", metavar="CONTROL", choices=("name", "identity", "random"),
                        help="score only these controls (the folder then holds only them): name, identity, random")
    parser.add_argument("--quiet", action="store_true", help="no progress bars and no table")
    parser.set_defaults(handler=run_controls)


def run_controls(args: argparse.Namespace) -> int:
    from genebench.build import add_controls
    from genebench.controls import control_table

    data = add_controls(args.data, names=args.only, progress=not args.quiet)
    table = control_table(data.tasks())
    if not args.quiet:
        print(table.to_markdown(index=False, floatfmt=".3f"))
    flagged = table[table["shortcut"]]
    print(f"controls for {len(table)} tasks in {args.data}/controls ({data.manifest['controls']['seconds']} s); "
          f"{len(flagged)} shortcut-solvable: {', '.join(flagged['task']) or 'none'}")
    return 0
