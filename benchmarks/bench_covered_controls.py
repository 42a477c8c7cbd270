"""The lift on a model's covered rows: scored from the stored control predictions vs the controls refitted there.

A model's table misses a few genes (every real one does), so each of its results needs the controls on the rows it
covers. genebench scores the controls' stored held-out predictions of those rows (`covered_control_scores`: the
control trained on all rows, scored on the model's rows); the reference alternative refits every control on the
covered rows alone (`control_scores`, which the run used before). This benchmark runs both on the paper's task
families (humantfs, hgnc, genecorpus, gene2gene, reactome, hpa: 64 tasks with derived ones) for a table covering
96% of the genes (a seeded 4% of a full table's genes dropped, issue #23), and prints, per fold scheme, the mean
and largest difference of the best control between the two, and the seconds of each with their ratio.

    python benchmarks/bench_covered_controls.py [--table minilm_hgnc_names.parquet]
        [--scheme paper family] [--data DIR]

Without the table, the genes of the selected tasks stand in for it (only its gene set matters here).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import argparse  # noqa: E402
import logging  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from genebench.constants import SNAPSHOT_DIR  # noqa: E402
from genebench.controls.covered import covered_control_scores  # noqa: E402
from genebench.controls.fit import control_scores  # noqa: E402
from genebench.data import BenchmarkData  # noqa: E402
from genebench.embeddings import GeneEmbeddings  # noqa: E402
from genebench.genes import task_genes  # noqa: E402
from genebench.probe.settings import ProbeSettings  # noqa: E402
from genebench.tasks.metadata import best_of  # noqa: E402
from genebench.tasks.task import Task  # noqa: E402

PAPER_FAMILIES = ("humantfs", "hgnc", "genecorpus", "gene2gene", "reactome", "hpa")


def covered_rows(task: Task, genes: set[str]) -> np.ndarray:
    """Rows whose genes (both, for gene pairs) all have a vector."""
    entities = task.entities if task.entities.ndim == 2 else task.entities[:, None]
    columns = [j for j, kind in enumerate(task.metadata.entity_types) if kind == "gene"]
    keep = np.ones(len(entities), dtype=bool)
    for j in columns:
        keep &= np.isin(entities[:, j].astype(str), list(genes))
    return np.flatnonzero(keep)


def main() -> None:
    """Score the covered controls both ways and print the differences and the seconds."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SNAPSHOT_DIR, help="data folder (default: the bundled snapshot)")
    parser.add_argument("--table", type=Path, default=None,
                        help="a full embedding table (`genebench encode ... --out FILE`); its genes are covered")
    parser.add_argument("--coverage", type=float, default=0.96, help="share of the table's genes kept")
    parser.add_argument("--scheme", dest="folds", nargs="+", default=["paper"], choices=("paper", "family"))
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    data = BenchmarkData(args.data)
    names = [meta.name for meta in data.tasks() if meta.family in PAPER_FAMILIES]
    settings = ProbeSettings()
    for folds in args.folds:
        tasks = [data.load_task(name, folds) for name in names
                 if folds == "paper" or not data.metadata(name).family_unscorable]
        table = sorted(map(str, GeneEmbeddings.load(args.table).symbols)) if args.table else task_genes(tasks)
        rng = np.random.default_rng(0)
        genes = set(np.asarray(table)[rng.random(len(table)) < args.coverage].tolist())
        rows = {task.name: covered_rows(task, genes) for task in tasks}
        source = args.table.name if args.table else "the tasks' genes"
        print(f"{folds} folds: {len(tasks)} tasks, {len(genes)} of {len(table)} genes of {source} covered; "
              f"{np.mean([len(rows[t.name]) / len(t.fold_ids) for t in tasks]):.3f} of the rows on average")
        start = time.perf_counter()
        stored = {task.name: covered_control_scores(data, task, rows[task.name], folds) for task in tasks}
        stored_seconds = time.perf_counter() - start
        start = time.perf_counter()
        restricted = [Task(task.metadata, task.entities[rows[task.name]], task.labels[rows[task.name]],
                           task.fold_ids[rows[task.name]]) for task in tasks]
        refit = control_scores(data, restricted, settings)
        refit_seconds = time.perf_counter() - start
        differences = {}
        for task in tasks:
            a, b = best_of(stored[task.name]), best_of(refit.get(task.name, {}))
            if a and b:
                differences[task.name] = a[1] - b[1]
        values = np.array(list(differences.values()))
        worst = max(differences, key=lambda name: abs(differences[name]))
        print(f"  best control, stored predictions minus refit on the covered rows: mean {values.mean():+.4f}, mean "
              f"|difference| {np.abs(values).mean():.4f}, largest {differences[worst]:+.4f} ('{worst}'), over "
              f"{len(values)} tasks")
        print(f"  stored predictions: {stored_seconds:7.2f} s; refit: {refit_seconds:7.2f} s "
              f"({refit_seconds / max(stored_seconds, 1e-9):.0f}x the stored predictions' time)")


if __name__ == "__main__":
    main()
