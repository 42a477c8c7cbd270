"""`genebench run` and `genebench encode`: the main job, and encoding alone."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from genebench.cli.options import (
    HelpFormatter,
    add_data_args,
    add_task_selection_args,
    open_data_from_args,
    selected_tasks,
)
from genebench.constants import DTYPES, INPUT_KINDS
from genebench.pipeline import DEFAULT_MODELS

logger = logging.getLogger(__name__)

RUN_EPILOG = """\
examples:
  genebench run --model sentence-transformers/all-MiniLM-L6-v2 --input description --out results/
  genebench run --model facebook/esm2_t33_650M_UR50D --input protein --category "protein properties"
  genebench run --model ctheodoris/Geneformer --input token --vocabulary token_dictionary.pkl
  genebench run --model gene2vec.txt --input precomputed --name my-lab/gene2vec --tasks "TF vs non-TF" Pathways
  genebench run --config model.yaml            # the same settings, from a file (see README)

Ctrl-C keeps every finished task; rerunning the same command resumes.
"""

ENCODE_EPILOG = """\
examples:
  genebench encode --model sentence-transformers/all-MiniLM-L6-v2 --input description --out minilm.parquet
  genebench encode --model facebook/esm2_t6_8M_UR50D --input protein --family hpa --out esm2.parquet
The parquet file can be shared and used again with --input precomputed --name ORG/NAME.
"""


def _add_model_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument("--model", metavar="MODEL",
                       help="Hub id or local folder (a table file for --input precomputed); default for "
                            f"description: {DEFAULT_MODELS['description']}")
    group.add_argument("--input", choices=INPUT_KINDS, help="how a gene becomes model input")
    group.add_argument("--name", metavar="ORG/NAME",
                       help="the id results and the leaderboard show (default: the Hub id; genebench/random-256, "
                            "genebench/bag-of-words); required for a table file or local folder")
    group.add_argument("--config", type=Path, metavar="YAML", help="read these settings from a model YAML")
    group.add_argument("--revision", help="model revision (commit, tag or branch)")
    group.add_argument("--pooling", help="token pooling: mean or cls (encoders), input or mean/cls (token input)")
    group.add_argument("--description-source", choices=("refseq", "ncbi", "hgnc", "csv"),
                       help="description text: bundled RefSeq summaries (default), live NCBI, HGNC names, or a CSV")
    group.add_argument("--descriptions", metavar="FILE", help="description CSV (symbol,description) for source csv")
    group.add_argument("--vocabulary", metavar="FILE", help="token input: gene -> token id dictionary (pickle or json)")
    group.add_argument("--region", choices=("gene", "cds"), help="dna input: genomic region or coding sequence")
    group.add_argument("--trust-remote-code", action="store_true",
                       help="allow the model's own Python code to run (needed by e.g. DNABERT-2, HyenaDNA)")
    group.add_argument("--device", help="cuda, mps or cpu (default: the best available)")
    group.add_argument("--dtype", choices=DTYPES,
                       help="precision of the forward pass (default auto: bf16 on a GPU and on a CPU with native bf16 "
                            "instructions, else float32; recorded with every result)")
    group.add_argument("--batch-size", type=int, help="inputs per forward pass")


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
    probe = run.add_argument_group("probe and output")
    probe.add_argument("--out", type=Path, default=Path("results"), metavar="DIR", help="results folder")
    probe.add_argument("--overwrite", choices=("only-missing", "always", "never"), default="only-missing",
                       help="what to do with results already in --out (only-missing resumes)")
    probe.add_argument("--C", type=float, dest="C", help="inverse L2 strength of the probes (default 1.0)")
    probe.add_argument("--pair-mode", choices=("mean", "concat"), help="gene-pair vector (default mean)")
    probe.add_argument("--include-genes", metavar="FILE", help="score only these genes (one symbol per line)")
    probe.add_argument("--exclude-genes", metavar="FILE", help="never score these genes")
    probe.add_argument("--common-with", nargs="+", metavar="EMBEDDINGS",
                       help="embedding files (from `genebench encode`) whose common genes every task is limited to")
    run.set_defaults(handler=run_run)

    encode = subparsers.add_parser("encode", help="encode genes with a model into an embedding file",
                                   epilog=ENCODE_EPILOG, formatter_class=HelpFormatter,
                                   description="Encode every gene the selected tasks need and save a parquet table.")
    _add_model_args(encode)
    add_task_selection_args(encode)
    add_data_args(encode)
    encode.add_argument("--out", type=Path, required=True, metavar="FILE", help="embedding parquet to write")
    encode.set_defaults(handler=run_encode)


def config_from_args(args: argparse.Namespace):
    """A `RunConfig` from the command line and an optional YAML (command-line values win)."""
    from genebench.errors import GenebenchError
    from genebench.pipeline import RunConfig

    adapter = {key: value for key, value in (
        ("pooling", args.pooling), ("source", args.description_source), ("descriptions", args.descriptions),
        ("vocabulary", args.vocabulary), ("region", args.region), ("device", args.device),
        ("dtype", args.dtype), ("batch_size", args.batch_size), ("trust_remote_code", args.trust_remote_code or None),
    ) if value is not None}
    probe = {k: v for k, v in (("C", getattr(args, "C", None)), ("pair_mode", getattr(args, "pair_mode", None)))
             if v is not None}
    extra = {k: getattr(args, k, None) for k in ("include_genes", "exclude_genes")}
    extra["common_with"] = [str(p) for p in getattr(args, "common_with", None) or []]
    if args.config:
        return RunConfig.from_yaml(args.config, model=args.model, input=args.input, name=args.name,
                                   revision=args.revision,
                                   adapter=adapter, probe=probe, **extra)
    if not args.input:
        raise GenebenchError("choose how genes become model input with --input "
                             f"{{{','.join(INPUT_KINDS)}}}, or pass --config model.yaml.")
    model = args.model or DEFAULT_MODELS.get(args.input)
    if not model:
        raise GenebenchError(f"--input {args.input} needs --model (a Hub id, local folder or table file).")
    return RunConfig(model=model, input=args.input, name=args.name, revision=args.revision, adapter=adapter,
                     probe=probe, **extra)


def run_encode(args: argparse.Namespace) -> int:
    from genebench import pipeline

    config = config_from_args(args)
    data = open_data_from_args(args)
    tasks = pipeline.select_tasks(data, [meta.name for meta in selected_tasks(args, data)])
    genes = pipeline.task_genes(tasks)
    embeddings = pipeline.encode(config, data, genes)
    pipeline.report_coverage(embeddings, len(genes))
    embeddings.save(args.out)
    print(f"wrote {args.out}")
    return 0


def run_run(args: argparse.Namespace) -> int:
    from genebench import pipeline
    from genebench.report import plot_categories

    config = config_from_args(args)
    data = open_data_from_args(args)
    done = pipeline.run(config, data, [meta.name for meta in selected_tasks(args, data)], args.out,
                        overwrite=args.overwrite)
    table = done.frame
    print(f"\n{done.model.id} ({config.input} input) on {len(done.results)} tasks, data revision "
          f"{data.revision['data_hash']}\n")
    print(pipeline.paper_table(table).to_markdown(index=False))
    skipped = sum(r.skipped is not None for r in done.results)
    if skipped:
        print(f"\n{skipped} tasks skipped (reasons in their result files).")
    figures = plot_categories(table, args.out / "figures" / "categories")
    print(f"\nresults in {args.out}/, figure {figures[0]}")
    return 0
