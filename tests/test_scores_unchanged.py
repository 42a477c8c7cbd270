"""Scores unchanged: a fixed precomputed table, run over every task (paper folds), gives the stored scores bit for bit.

The table is made from each gene's symbol alone (a seeded vector per symbol; 1 gene in 25 left out, so about 96%
of the genes are covered and almost every task is scored on part of its rows), so it does not depend on which
tasks exist. The stored scores were made by the code before the pipeline was split, and stored again when every
probe moved to one BLAS thread (main scores moved by at most 1.0e-6, a fold's by 5.0e-6): BLAS sums in another order
with another thread count (`python tests/test_scores_unchanged.py --store` rewrites them: only for a change meant
to move scores). For the same reason the run happens in a fresh process whose OpenBLAS runs one fixed kernel,
`KERNEL`: OpenBLAS picks its kernels by CPU, and its AVX-512 ones sum in another order than the AVX2 ones the scores
were stored with (41 tasks moved by about 1e-7 on an AVX-512 Intel Xeon).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from genebench.atomic import write_atomic
from genebench.config import RunConfig
from genebench.constants import SNAPSHOT_DIR
from genebench.data import BenchmarkData
from genebench.pipeline import run, select_tasks, task_genes

STORED = Path(__file__).parent / "fixtures" / "scores_unchanged.json"
DIM = 16
KERNEL = "Haswell"  # OpenBLAS's AVX2 kernels: any x86-64 CPU with AVX2 runs them, AMD's Zen by default


def _seed(symbol: str) -> int:
    return int.from_bytes(hashlib.sha256(symbol.encode()).digest()[:8], "little")


def write_table(genes: list[str], path: Path) -> Path:
    """A wide parquet table (`symbol`, d0..d15): a seeded float32 vector per symbol, without 1 gene in 25."""
    kept = [g for g in genes if _seed(g) % 25]
    vectors = np.stack([np.random.default_rng(_seed(g)).standard_normal(DIM) for g in kept]).astype(np.float32)
    frame = pd.DataFrame(vectors, columns=[f"d{i}" for i in range(DIM)])
    frame.insert(0, "symbol", pd.Series(kept, dtype="string"))
    frame.to_parquet(path, index=False)
    return path


def scores(data: BenchmarkData, folder: Path) -> dict[str, dict]:
    """Every task's main score, its fold values and mean, or why it was skipped, from a run on the fixed table."""
    names = [meta.name for meta in data.tasks()]
    table = write_table(task_genes(select_tasks(data, names)), folder / "table.parquet")
    config = RunConfig(model=str(table), input="precomputed", name="genebench-tests/seeded-16", folds=["paper"])
    done = run(config, data, names, folder / "results", progress=False)
    return {r.task.name: {"main_score": r.main_score, "skipped": r.skipped,
                          **({"mean": r.scores[r.main_score].mean, "folds": r.scores[r.main_score].folds}
                             if r.skipped is None else {})} for r in done.results}


def scores_on_the_fixed_kernel(folder: Path) -> dict[str, dict]:
    """`scores` in a fresh process whose OpenBLAS runs `KERNEL`; skips where this CPU cannot run it."""
    done = subprocess.run([sys.executable, __file__, "--print", str(folder)], capture_output=True, text=True,
                          env={**os.environ, "OPENBLAS_CORETYPE": KERNEL})
    if done.returncode == -signal.SIGILL:
        pytest.skip(f"this CPU cannot run OpenBLAS's {KERNEL} kernel, the one the scores were stored with")
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    if found["kernel"] != KERNEL:
        pytest.skip(f"OpenBLAS runs its {found['kernel']} kernel here, not {KERNEL}: the stored scores' sums differ")
    return found["scores"]


def _kernel() -> str:
    from threadpoolctl import threadpool_info

    return next((i.get("architecture", "?") for i in threadpool_info() if i["internal_api"] == "openblas"), "none")


@pytest.mark.slow
def test_every_tasks_scores_are_the_stored_ones_bit_for_bit(tmp_path):
    stored = json.loads(STORED.read_text())
    now = scores_on_the_fixed_kernel(tmp_path)
    compared = sorted(set(stored) & set(now))
    assert len(compared) >= 120, f"only {len(compared)} of the stored tasks still exist"
    different = {name: (stored[name], now[name]) for name in compared if stored[name] != now[name]}
    assert not different, f"{len(different)} tasks score differently, e.g. {next(iter(different.items()))}"
    assert sum(entry["skipped"] is None for entry in now.values()) >= 120


if __name__ == "__main__":
    if sys.argv[1:2] == ["--print"] and len(sys.argv) == 3:  # the test's fresh process
        print(json.dumps({"kernel": _kernel(), "scores": scores(BenchmarkData(SNAPSHOT_DIR), Path(sys.argv[2]))}))
    elif sys.argv[1:] == ["--store"]:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                stored = scores_on_the_fixed_kernel(Path(tmp))
            except pytest.skip.Exception as reason:
                sys.exit(f"not stored: {reason}")
        write_atomic(STORED, json.dumps(stored, indent=1) + "\n")
        print(f"stored {STORED}")
    else:
        pytest.exit("usage: python tests/test_scores_unchanged.py --store", returncode=2)
