"""How long the control baselines take on the bundled snapshot, against one model's probing.

Every control (name, identity, and random over 5 or more seeds) on every bundled task, under paper folds and then under
both fold schemes (issue #22), and the size of what they store. Baseline, measured in the same run: probing one
model on the same tasks, the random baseline at the controls' width (`genebench run --input random` after
encoding). `run` itself does no control work: it reads the stored scores and predictions.

    python benchmarks/bench_controls.py [--data DIR]
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import argparse  # noqa: E402
import logging  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from genebench.constants import SNAPSHOT_DIR  # noqa: E402
from genebench.controls.build import add_controls  # noqa: E402
from genebench.controls.fit import fit_controls  # noqa: E402
from genebench.controls.table import RANDOM_DIM  # noqa: E402
from genebench.data import BenchmarkData  # noqa: E402
from genebench.genes import task_genes  # noqa: E402
from genebench.partners import partner_embeddings  # noqa: E402
from genebench.probe.engine import iter_task_scores  # noqa: E402
from genebench.probe.settings import ProbeSettings  # noqa: E402
from model_adapters.baselines import RandomAdapter  # noqa: E402


def main() -> None:
    """Time the baseline, then the controls, and print both with their ratios."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SNAPSHOT_DIR, help="data folder (default: the bundled snapshot)")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    out = Path(tempfile.mkdtemp(prefix="genebench-bench-controls-")) / "data"
    shutil.copytree(args.data, out)
    try:
        data = BenchmarkData(out)
        tasks = [data.load_task(meta.name) for meta in data.tasks()]
        start = time.perf_counter()
        adapter = RandomAdapter(hgnc=data.hgnc(), dim=RANDOM_DIM)
        embeddings = adapter.encode(task_genes(tasks))
        for _ in iter_task_scores(tasks, embeddings, partner_embeddings=partner_embeddings(tasks, embeddings, data,
                                                                                             adapter)):
            pass
        baseline = time.perf_counter() - start
        print(f"{'baseline: one model':>22}: {baseline:7.2f} s  (random, {RANDOM_DIM} dims, {len(tasks)} tasks)")
        for folds in (["paper"], ["paper", "family"]):
            start = time.perf_counter()
            add_controls(out, schemes=folds, progress=False)
            seconds = time.perf_counter() - start
            print(f"{'controls, ' + ' + '.join(folds):>22}: {seconds:7.2f} s  ({seconds / baseline:.2f} x the "
                  f"one-model baseline; name, identity and random over 5+ seeds; {os.cpu_count()} CPUs visible)")
        size = sum(path.stat().st_size for path in (out / "controls").iterdir())
        print(f"{'stored controls':>22}: {size / 1e6:7.2f} MB in {out / 'controls'}")
        print(f"{'float16 storage':>22}: largest AUC difference {float16_error(BenchmarkData(out)):.2e} between the "
              "stored score and the probe's own (float32 probabilities), name control, both schemes")
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)


def float16_error(data: BenchmarkData) -> float:
    """The largest difference, over tasks and fold schemes, between the name control's stored score (computed from
    its float16 predictions) and the score the probe computed from its own float32 probabilities, refitted on the
    tasks `add_controls` fits (the name control's vocabulary and the probe's preconditioning depend on them)."""
    largest = 0.0
    for folds in ("paper", "family"):
        metas = [meta for meta in data.tasks(folds) if "name" in meta.controls
                 and (folds == "paper" or meta.has_family_folds)]
        tasks = [data.load_task(meta.name, folds) for meta in metas]
        for _, _, scores in fit_controls(data, tasks, ProbeSettings(), names=["name"], progress=False):
            if scores.scores:
                stored = data.metadata(scores.task.name, folds).controls["name"]
                largest = max(largest, abs(stored - scores.scores[scores.main_score].mean))
    return largest


if __name__ == "__main__":
    main()
