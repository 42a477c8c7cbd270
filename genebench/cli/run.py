"""`genebench run` and `genebench encode`: the main job, and encoding alone."""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

from genebench.cli.options import (
    HelpFormatter,
    add_data_args,
    add_engine_args,
    add_exclude_flagged_arg,
    add_task_selection_args,
    open_data_from_args,
    open_engine,
    selected_tasks,
    task_selection,
)
from genebench.wording import counted

logger = logging.getLogger(__name__)

DEFAULT_OUT = Path("results")
"""Where `run` writes without --out: one sub-folder per model."""

RUN_EPILOG = """\
examples:
  genebench run --model sentence-transformers/all-MiniLM-L6-v2 --input description --out results/
  genebench run --model facebook/esm2_t33_650M_UR50D --input protein --category "protein properties"
  genebench run --model ctheodoris/Geneformer --input token --vocabulary token_dictionary.pkl
  genebench run --model gene2vec.txt --input precomputed --name my-lab/gene2vec --tasks "TF vs non-TF" Pathways
  genebench run --model vectors.npy --index symbols.txt --input precomputed --name my-lab/vectors
  genebench run --config model.yaml            # the same settings, from a file (see README)
  genebench run --config model.yaml --engine ray --ray-address auto   # on a Ray cluster (docs/scaling.md)

Ctrl-C keeps every finished task; rerunning the same command resumes.
"""

ENCODE_EPILOG = """\
examples:
  genebench encode --model sentence-transformers/all-MiniLM-L6-v2 --input description --out minilm.parquet
  genebench encode --model facebook/esm2_t6_8M_UR50D --input protein --family hpa --out esm2.parquet
The parquet file can be shared and used again with --input precomputed --name ORG/NAME.
"""


def _add_model_args(parser: argparse.ArgumentParser) -> None:
    from genebench.inputs import ADAPTERS, options

    group = parser.add_argument_group("model")
    group.add_argument("--model", metavar="MODEL",
                       help="Hub id or local folder (a table file for --input precomputed); default for "
                            f"description: {ADAPTERS['description'].default_model}")
    group.add_argument("--input", choices=list(ADAPTERS), help="how a gene becomes model input")
    group.add_argument("--name", metavar="ORG/NAME",
                       help="the id results and the leaderboard show (default: the Hub id; genebench/random-256, "
                            "genebench/bag-of-words); required for a table file or local folder")
    group.add_argument("--config", type=Path, metavar="YAML", help="read these settings from a model YAML")
    group.add_argument("--model-revision", metavar="REV", help="model revision (commit, tag or branch)")
    group.add_argument("--revision", dest="model_revision", help=argparse.SUPPRESS)  # its old name, unlisted
    adapter = parser.add_argument_group("adapter options (each applies to the input kinds its help names)")
    for option in options().values():
        if option.type is bool:
            adapter.add_argument(option.cli_flag, dest=f"adapter_{option.name}", action="store_true", default=None,
                                 help=option.help)
        else:
            adapter.add_argument(option.cli_flag, dest=f"adapter_{option.name}", type=option.type,
                                 choices=option.choices, metavar=None if option.choices else
                                 ("FILE" if option.is_file else option.name.upper()), help=option.help)


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run", help="encode genes with a model and probe every selected task", epilog=RUN_EPILOG,
        formatter_class=HelpFormatter,
        description="Encode the genes the selected tasks need (cached), fit a linear probe per task on the stored "
                    "folds, write one result file per task as it finishes, print the paper's table and save a "
                    "figure.",
    )
    _add_model_args(run)
    add_task_selection_args(run)
    add_data_args(run)
    add_engine_args(run)
    probe = run.add_argument_group("probe and output")
    probe.add_argument("--out", type=Path, metavar="DIR",
                       help="results folder (default: results/<org__model>/, one per model, so runs of two models "
                            "never meet in one folder)")
    probe.add_argument("--overwrite", choices=("only-missing", "always", "never"), default="only-missing",
                       help="what to do with results already in --out (only-missing resumes)")
    probe.add_argument("--C", type=float, dest="C", help="inverse L2 strength of the probes (default 1.0)")
    probe.add_argument("--scale", choices=("none", "standard"),
                       help="probe features: none = raw, the paper's protocol (default); standard = standardised "
                            "per fold (scores up to 0.08 AUC apart on small tasks)")
    probe.add_argument("--pair-mode", choices=("mean", "concat"), help="gene-pair vector (default mean)")
    probe.add_argument("--multilabel-auc", choices=("probabilities", "predictions"),
                       help="multi-label ROC AUC from probabilities (default) or from hard 0/1 predictions, the "
                            "reference's: to reproduce the paper, not to measure a model (recorded in the run "
                            "identity)")
    probe.add_argument("--scheme", dest="schemes", nargs="+", action="extend", choices=("paper", "family"),
                       metavar="SCHEME",
                       help="fold schemes, each scored as a run of its own: paper (the paper's folds, the headline, in "
                            "--out) and family (gene families held out together, in --out/folds-family/); default "
                            "both; --scheme paper replicates the paper alone")
    probe.add_argument("--folds", dest="schemes", nargs="+", action="extend", choices=("paper", "family"),
                       help=argparse.SUPPRESS)  # its old name, unlisted
    probe.add_argument("--include-genes", metavar="FILE", help="score only these genes (one symbol per line)")
    probe.add_argument("--exclude-genes", metavar="FILE", help="never score these genes")
    probe.add_argument("--common-with", nargs="+", action="extend", metavar="EMBEDDINGS",
                       help="embedding files (from `genebench encode`) whose common genes every task is limited to")
    add_exclude_flagged_arg(probe)
    run.set_defaults(handler=run_run)

    encode = subparsers.add_parser("encode", help="encode genes with a model into an embedding file",
                                   epilog=ENCODE_EPILOG, formatter_class=HelpFormatter,
                                   description="Encode every gene the selected tasks need and save a parquet table.")
    _add_model_args(encode)
    add_task_selection_args(encode)
    add_data_args(encode)
    add_engine_args(encode)
    encode.add_argument("--out", type=_parquet_file, required=True, metavar="FILE",
                        help="embedding parquet to write (ends in .parquet)")
    encode.set_defaults(handler=run_encode)


def _parquet_file(value: str) -> Path:
    """`encode --out`: a path ending in .parquet, the format `run --input precomputed` reads."""
    path = Path(value)
    if path.suffix.lower() != ".parquet":
        raise argparse.ArgumentTypeError(f"expected a file name ending in .parquet (encode writes parquet, which "
                                         f"--input precomputed reads), found '{value}'; use --out "
                                         f"{path.with_suffix('.parquet').name}")
    return path


def config_from_args(args: argparse.Namespace):
    """A `RunConfig` from the command line and an optional YAML (command-line values win)."""
    from genebench.config import RunConfig
    from genebench.errors import GenebenchError
    from genebench.inputs import ADAPTERS, options

    adapter = {key.removeprefix("adapter_"): value for key, value in vars(args).items()
               if key.startswith("adapter_") and value is not None}
    declared = options()
    for name, value in adapter.items():  # a missing file fails here, in one line, not after minutes of loading
        option = declared[name]
        if option.is_file and not Path(value).is_file():
            raise GenebenchError(f"{option.cli_flag} '{value}': no such file; expected the {option.help}.")
    probe = {k: getattr(args, k, None) for k in ("C", "scale", "pair_mode", "multilabel_auc")
             if getattr(args, k, None) is not None}
    extra = {k: getattr(args, k, None) for k in ("include_genes", "exclude_genes")}
    extra["common_with"] = [str(p) for p in getattr(args, "common_with", None) or []]
    values = {"model": args.model, "input": args.input, "name": args.name, "revision": args.model_revision,
              "adapter": adapter, "probe": probe, "schemes": getattr(args, "schemes", None),
              "tasks": task_selection(args), **extra}
    if args.config:
        return RunConfig.from_yaml(args.config, **values)
    if not args.input:
        raise GenebenchError("choose how genes become model input with --input "
                             f"{{{','.join(ADAPTERS)}}}, or pass --config model.yaml.")
    return RunConfig.build(**{k: v for k, v in values.items() if v is not None})


def run_encode(args: argparse.Namespace) -> int:
    from genebench import pipeline
    from genebench.report import coverage_line, descriptions_line

    config = config_from_args(args)
    data = open_data_from_args(args)
    tasks = pipeline.select_tasks(data, [meta.name for meta in selected_tasks(config.tasks, data)])
    genes = pipeline.task_genes(tasks)
    with open_engine(args) as engine:
        embeddings = pipeline.encode(config, data, genes, engine=engine)
    print(coverage_line(embeddings, len(genes)))
    if "descriptions" in embeddings.model.notes:
        print(descriptions_line(embeddings.model.notes["descriptions"]))
    embeddings.save(args.out)
    print(f"wrote {args.out}")
    return 0


def remove_empty_folders(root: Path) -> None:
    """Remove `root` and the folders under it when none holds a file."""
    if root.is_dir() and not any(path.is_file() or path.is_symlink() for path in root.rglob("*")):
        for folder in sorted(root.rglob("*"), key=lambda path: len(path.parts), reverse=True):
            folder.rmdir()
        root.rmdir()


def run_run(args: argparse.Namespace) -> int:
    from genebench import pipeline
    from genebench.report import (
        descriptions_line,
        flagged_note,
        markdown_table,
        paper_table,
        plot_categories,
        unconverged_note,
    )
    from genebench.results import drop_flagged, model_dir_name
    from genebench.run_folder import scheme_folder

    start = time.perf_counter()
    config = config_from_args(args)
    args.out = args.out or DEFAULT_OUT / model_dir_name(config.model_id())
    data = open_data_from_args(args)
    names = [meta.name for meta in selected_tasks(config.tasks, data)]
    setup = time.perf_counter() - start
    fresh = not args.out.exists()
    try:
        with open_engine(args) as engine:
            done = pipeline.run(config, data, names, args.out, overwrite=args.overwrite, engine=engine)
    except BaseException:
        if fresh:
            remove_empty_folders(args.out)  # a first run that wrote nothing leaves no folder behind
        raise
    start = time.perf_counter()
    table = done.frame
    schemes = "; ".join(f"{scheme} folds {counted(len(results), 'task')}" for scheme, results in done.by_scheme.items())
    summarised = drop_flagged(table) if args.exclude_flagged else table
    print(f"\n{done.model.id} ({config.input} input), data revision {data.data_hash}: {schemes}\n")
    print(markdown_table(paper_table(summarised)))
    if "descriptions" in done.model.notes:
        print(descriptions_line(done.model.notes["descriptions"]))
    note = flagged_note(table, excluded=args.exclude_flagged)
    if note:
        print(note)
    skipped = {scheme: sum(r.skipped is not None for r in results) for scheme, results in done.by_scheme.items()}
    if any(skipped.values()):
        counts = ", ".join(f"{n} under {scheme} folds" for scheme, n in skipped.items() if n)
        print(f"\ntasks skipped: {counts} (reasons in their result files).")
    if note := unconverged_note(table):
        print(note)
    if not (summarised["is_main"] & summarised["converged"]).any():
        print(f"\nresults in {args.out}/ (no converged score to draw)")
        return 0
    name = "categories_without_flagged" if args.exclude_flagged else "categories"  # never a figure of other tasks
    figures = plot_categories(summarised, args.out / "figures" / name)
    print("", *(f"results ({scheme} folds): {scheme_folder(args.out, scheme)}/" for scheme in done.by_scheme),
          f"figure: {figures[0]}", sep="\n")
    seconds = {**done.seconds, "select": done.seconds["select"] + setup, "report": time.perf_counter() - start}
    logger.debug("seconds per phase: %s", json.dumps({phase: round(s, 3) for phase, s in seconds.items()}))
    return 0
