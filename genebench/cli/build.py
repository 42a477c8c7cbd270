"""`genebench build` and `genebench push`: materialise task families, and publish them on the Hub."""

from __future__ import annotations

import argparse
from pathlib import Path

from genebench.cli.options import HelpFormatter, int_at_least
from genebench.constants import DEFAULT_SEED, N_FOLDS

BUILD_EPILOG = """\
examples:
  genebench build --out data/                               # every family, from the live sources
  genebench build --out data/ --sources ../shared/data      # from local copies of the sources
  genebench build --out data/ --family humantfs reactome    # refresh two families in place
"""

PUSH_EPILOG = """\
examples:
  genebench push data/ --repo my-org/genebench
  genebench push data/ --repo my-org/genebench --private --message "Reactome 2024-09 refresh"
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    from genebench.builders import FAMILIES

    build = subparsers.add_parser(
        "build", help="materialise task families into a parquet dataset folder", epilog=BUILD_EPILOG,
        formatter_class=HelpFormatter,
        description="Download each family's sources (or read local copies), normalise symbols to current HGNC, "
                    "assign seeded folds and write a plain parquet dataset folder with its dataset card. "
                    "Families are swapped in atomically: a failed build leaves the folder as it was.",
    )
    build.add_argument("--out", required=True, type=Path, metavar="DIR", help="the data folder to write")
    build.add_argument("--family", nargs="+", action="extend", metavar="NAME",
                       help=f"families to build (default: all): {', '.join(FAMILIES)}")
    build.add_argument("--sources", type=Path, metavar="DIR",
                       help="folder of local source files (DIR/<family>/...) overriding the download URLs")
    build.add_argument("--hgnc", metavar="URL_OR_FILE", help="HGNC complete set used to normalise symbols "
                       "(default: the live download, or DIR/hgnc/ under --sources)")
    build.add_argument("--refseq", type=Path, metavar="FILE",
                       help="RefSeq gene summaries to bundle as a description source "
                            "(default: --sources DIR/refseq_summaries/ when present)")
    build.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the fold assignment")
    build.add_argument("--n-folds", type=int_at_least(2), default=N_FOLDS,
                       help="number of cross-validation folds (at least 2)")
    build.add_argument("--no-controls", action="store_true",
                       help="skip scoring the control baselines (run `genebench controls --data DIR` later)")
    build.set_defaults(handler=run_build)

    push = subparsers.add_parser("push", help="upload a built data folder to a Hub dataset repo", epilog=PUSH_EPILOG,
                                 formatter_class=HelpFormatter,
                                 description="Verify a built folder against its manifest, then upload it unchanged "
                                             "in one commit to a Hugging Face dataset repository.")
    push.add_argument("folder", type=Path, metavar="DIR", help="a folder written by `genebench build`")
    push.add_argument("--repo", required=True, metavar="ORG/NAME", help="Hub dataset repository id")
    push.add_argument("--private", action="store_true", help="create the repository as private")
    push.add_argument("--message", default="Upload genebench data", help="commit message")
    push.set_defaults(handler=run_push)


def run_build(args: argparse.Namespace) -> int:
    from genebench.build import build_data

    data = build_data(args.out, args.family, sources_dir=args.sources, hgnc=args.hgnc, refseq=args.refseq,
                      seed=args.seed, n_folds=args.n_folds, controls=not args.no_controls)
    print(f"built {', '.join(data.families)} into {args.out} ({len(data.tasks())} tasks, "
          f"data revision {data.data_hash})")
    return 0


def run_push(args: argparse.Namespace) -> int:
    from genebench.publish import push_data

    url = push_data(args.folder, args.repo, private=args.private, message=args.message)
    print(f"pushed {args.folder} to {url}")
    return 0
