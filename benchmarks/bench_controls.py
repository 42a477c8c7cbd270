"""How long the control baselines take on the bundled snapshot, against the target and one model's probing.

Target: every control (name, identity, random) on every bundled task in <= 60 s on 2 cores (issue #15).
Baseline, measured in the same run: probing one model on the same tasks, the random baseline at the controls'
width (`genebench run --input random` after encoding). `run` itself does no control work: it reads the stored
scores with the task metadata.

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
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

from genebench.build import add_controls  # noqa: E402
from genebench.constants import SNAPSHOT_DIR  # noqa: E402
from genebench.controls import RANDOM_DIM  # noqa: E402
from genebench.data import BenchmarkData  # noqa: E402
from genebench.pipeline import partner_embeddings, task_genes  # noqa: E402
from genebench.probe.engine import iter_task_scores  # noqa: E402
from genebench.results import read_result  # noqa: E402
from model_adapters.baselines import RandomAdapter  # noqa: E402

TARGET = 60.0


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
        start = time.perf_counter()
        controls = add_controls(out, progress=False)
        seconds = time.perf_counter() - start
        per_control: dict[str, float] = defaultdict(float)
        for relative in controls.manifest["controls"]["files"]:
            result = read_result(out / relative)
            per_control[result.model.id] += result.timing.get("probe_seconds", 0.0)
        for name, spent in sorted(per_control.items()):
            print(f"{name:>22}: {spent:7.2f} s probing")
        print(f"{'all controls':>22}: {seconds:7.2f} s  ({seconds / TARGET:.2f} x target {TARGET:.0f} s, "
              f"{seconds / baseline:.2f} x the one-model baseline; {os.cpu_count()} CPUs visible)")
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
