"""`genebench sweep`: many models, one task selection and probe setting, one report."""

from __future__ import annotations

import argparse
from pathlib import Path

from genebench.cli.options import HelpFormatter, add_engine_args, open_engine

SWEEP_EPILOG = """\
examples:
  genebench sweep sweep.yaml --out sweeps/text-models/
  genebench sweep sweep.yaml --out sweeps/text-models/ --engine ray --ray-address auto

sweep.yaml:
  models:                       # model entries, as in `genebench run --config model.yaml`
    - {model: sentence-transformers/all-MiniLM-L6-v2, input: description}
    - {model: BAAI/bge-small-en-v1.5, input: description}
    - {input: random, adapter: {dim: 384}}
  tasks: {family: [humantfs, reactome]}   # tasks, family, category, type, no_derived (default: every task)
  probe: {C: 1.0}                          # shared by every model
  data: null                               # built data folder or Hub id (default: the bundled snapshot)

Each model gets its own folder under --out; rerunning skips finished models and resumes the others.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    sweep = subparsers.add_parser(
        "sweep", help="score many models from one sweep file, each in its own folder, with one report",
        epilog=SWEEP_EPILOG, formatter_class=HelpFormatter,
        description="Run the main job for every model of a sweep file on the same tasks and probe settings, skip "
                    "models that finished before, and write one report over all of them (OUT/report/).")
    sweep.add_argument("sweep", type=Path, metavar="SWEEP.yaml", help="the sweep file")
    sweep.add_argument("--out", type=Path, required=True, metavar="DIR", help="the sweep's results folder")
    sweep.add_argument("--overwrite", choices=("only-missing", "always", "never"), default="only-missing",
                       help="what to do with results already in --out (only-missing skips finished models and "
                            "resumes the others)")
    add_engine_args(sweep)
    sweep.set_defaults(handler=run_sweep)


def run_sweep(args: argparse.Namespace) -> int:
    from genebench import sweep
    from genebench.cli.report import summary_text
    from genebench.results import load_results

    plan = sweep.Sweep.from_yaml(args.sweep)
    with open_engine(args) as engine:
        done = sweep.run_sweep(plan, args.out, engine=engine, overwrite=args.overwrite)
    print()
    print(summary_text(load_results(list(done.folders.values()))))
    counts = {s: list(done.status.values()).count(s) for s in ("scored", "skipped")}
    print(f"\n{counts['scored']} models scored, {counts['skipped']} finished before; report in "
          f"{args.out / sweep.REPORT_DIR}/")
    return 0
