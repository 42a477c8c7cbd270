"""Whether added over names' per-task 95% intervals hold under the null, and what they cost (issue 32).

Random vectors carry nothing about a gene beyond its identity, so under family folds a per-task interval should
exclude 0 for about 5% of tasks (target: 2% to 8%). For each width and seed, every family-fold task is probed once
with seeded random vectors, then added over names is computed from the same held-out scores twice, in the same
run: the baseline, a gene bootstrap with the fitted stacking slopes held (genebench before #32), and the method
now used, a family bootstrap with the slopes refitted in each draw. Printed per run: the share of intervals that
exclude 0 under each (and their ratio), the mean added over names, and the seconds of each over all tasks (and
their ratio); then the totals.

    PYTHONPATH=$PWD python benchmarks/bench_understanding.py [--widths 128 384] [--seeds 0 1 2] [--data DIR]

With `--table PATH` (a precomputed vectors table, `model_adapters/precomputed.py`) or `--input KIND --model NAME`
(any adapter), that model is probed instead of random vectors: for a names-only model (MiniLM over HGNC names, a
character n-gram table), the mean added over names should sit near 0 and few tasks be significant.
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
from genebench.controls.added import AddedOverNames, added_over_names, mean_with_ci  # noqa: E402
from genebench.data import BenchmarkData  # noqa: E402
from genebench.embeddings import GeneEmbeddings  # noqa: E402
from genebench.genes import task_genes  # noqa: E402
from genebench.inputs import get_adapter  # noqa: E402
from genebench.partners import partner_embeddings  # noqa: E402
from genebench.probe.engine import TaskScores, iter_task_scores  # noqa: E402
from genebench.probe.settings import ProbeSettings  # noqa: E402
from genebench.tasks.task import Task  # noqa: E402

BASELINE, METHOD = "gene bootstrap", "family bootstrap, slopes refitted"


def probed(data: BenchmarkData, tasks: list[Task], embeddings: GeneEmbeddings) -> list[TaskScores]:
    """Every task's held-out scores under family folds (the skipped left out)."""
    partners = partner_embeddings(tasks, embeddings, data, None)
    scored = iter_task_scores(tasks, embeddings, ProbeSettings(scheme="family"), partner_embeddings=partners)
    return [scores for scores in scored if scores.skipped is None and scores.rows is not None]


def both_ways(data: BenchmarkData, scored: list[TaskScores]) -> dict[str, tuple[list[AddedOverNames], float]]:
    """Added over names of each scored task by the baseline and by the method now used, and the seconds of each."""
    out: dict[str, tuple[list[AddedOverNames], float]] = {}
    names = {s.task.name: data.control_predictions(s.task.name, "family").get("name") for s in scored}
    for method, options in ((BASELINE, {"refit": False}), (METHOD, {"families": data.gene_families})):
        start, records = time.perf_counter(), []
        for scores in scored:
            if names[scores.task.name] is not None:
                records.append(added_over_names(scores.task, scores.rows, scores.held_out, names[scores.task.name],
                                                **options))
        out[method] = [r for r in records if r.skipped is None], time.perf_counter() - start
    return out


def excluding_zero(records: list[AddedOverNames]) -> int:
    """How many intervals lie wholly above or below 0."""
    return sum(r.low > 0 or r.high < 0 for r in records)


def report(label: str, found: dict[str, tuple[list[AddedOverNames], float]]) -> tuple[int, int, int, float, float]:
    """Print one run's figures; return (tasks, excluded by the baseline, by the method, seconds of each)."""
    (old, old_s), (new, new_s) = found[BASELINE], found[METHOD]
    n, old_x, new_x = len(new), excluding_zero(old), excluding_zero(new)
    mean, low, high = mean_with_ci(np.array([r.value for r in new]), np.array([r.draws for r in new]))
    print(f"{label}: {n} tasks; intervals excluding 0: baseline {old_x} ({old_x / n:.1%}), now {new_x} "
          f"({new_x / n:.1%}), ratio {new_x / max(old_x, 1):.2f}; mean added over names {mean:+.4f} "
          f"[{low:+.4f}, {high:+.4f}]; seconds over all tasks: baseline {old_s:.1f}, now {new_s:.1f} "
          f"({new_s / old_s:.2f}x)", flush=True)
    return n, old_x, new_x, old_s, new_s


def main() -> None:
    """Probe, compute added over names both ways, print each run and the totals."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SNAPSHOT_DIR, help="data folder (default: the bundled snapshot)")
    parser.add_argument("--widths", type=int, nargs="+", default=[128, 384], help="random vector widths")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="random vector seeds")
    parser.add_argument("--table", type=Path, help="a precomputed vectors table to score instead of random vectors")
    parser.add_argument("--input", help="an adapter's input kind to score instead (with --model)")
    parser.add_argument("--model", help="the adapter's model (with --input)")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    data = BenchmarkData(args.data)
    tasks = [data.load_task(meta.name, "family") for meta in data.tasks("family") if not meta.family_unscorable]
    genes = task_genes(tasks)
    if args.table or args.input:
        kind, model = ("precomputed", str(args.table)) if args.table else (args.input, args.model)
        embeddings = get_adapter(kind, model, hgnc=data.hgnc()).encode(genes)
        report(f"{kind} {model}", both_ways(data, probed(data, tasks, embeddings)))
        return
    totals = np.zeros(5)
    for width in args.widths:
        for seed in args.seeds:
            embeddings = get_adapter("random", hgnc=data.hgnc(), dim=width, seed=seed).encode(genes)
            totals += report(f"random {width}-d, seed {seed}", both_ways(data, probed(data, tasks, embeddings)))
    n, old_x, new_x, old_s, new_s = totals
    print(f"all runs: {int(n)} intervals; excluding 0: baseline {old_x / n:.1%}, now {new_x / n:.1%} "
          f"(target 2% to 8%), ratio {new_x / max(old_x, 1):.2f}; seconds per run: baseline "
          f"{old_s / len(args.widths) / len(args.seeds):.1f}, now {new_s / len(args.widths) / len(args.seeds):.1f} "
          f"(+{(new_s - old_s) / len(args.widths) / len(args.seeds):.1f} s, {new_s / old_s:.2f}x)")


if __name__ == "__main__":
    main()
