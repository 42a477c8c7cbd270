"""What scoring family folds costs: one model, about ten tasks of every type, `genebench run --scheme paper` against
`--scheme paper family` (the family run adds added over names), each a fresh process, measured in the same run.

Target (issue 22): scoring both schemes costs at most 2.1x the paper scheme alone.

    PYTHONPATH=$PWD python benchmarks/bench_folds.py                       # a seeded 384-d table over every gene
    PYTHONPATH=$PWD python benchmarks/bench_folds.py --table minilm.parquet --per-type 10 --repeats 2
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

TARGET = 2.1


def seeded_table(path: Path, dim: int = 384) -> Path:
    """A seeded `dim`-d table over every approved symbol of the bundled data (a precomputed input)."""
    from genebench.data import open_data

    symbols = open_data().hgnc()["symbol"].astype(str).to_numpy()
    vectors = np.random.default_rng(0).normal(size=(len(symbols), dim)).astype(np.float32)
    pd.DataFrame({"symbol": symbols, "vector": list(vectors)}).to_parquet(path)
    return path


def pick_tasks(per_type: int) -> list[str]:
    """Up to `per_type` tasks of every type, in registry order (the derived tasks' parents not implied)."""
    from genebench.data import open_data

    chosen: dict[str, list[str]] = {}
    for meta in open_data().tasks():
        if len(chosen.setdefault(meta.type, [])) < per_type:
            chosen[meta.type].append(meta.name)
    return [name for names in chosen.values() for name in names]


def timed_run(table: Path, tasks: list[str], folds: list[str], out: Path, cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, the process and its threads) of one `genebench run` process. On a
    machine shared with other work, CPU seconds are the steadier figure."""
    command = [sys.executable, "-m", "genebench.cli", "run", "--input", "precomputed", "--model", str(table),
               "--name", "bench/folds", "--tasks", *tasks, "--scheme", *folds, "--out", str(out)]
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "GENEBENCH_CACHE": str(cache)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - start, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, help="a precomputed table (default: a seeded 384-d table)")
    parser.add_argument("--per-type", type=int, default=10, help="tasks per task type")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each; the fastest counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        table = args.table or seeded_table(root / "table.parquet")
        tasks = pick_tasks(args.per_type)
        print(f"{len(tasks)} tasks, table {table.name}")
        seconds: dict[str, list[tuple[float, float]]] = {"paper": [], "both": []}
        for i in range(args.repeats):
            for name, folds in (("paper", ["paper"]), ("both", ["paper", "family"])):
                seconds[name].append(timed_run(table, tasks, folds, root / f"{name}-{i}", root / "cache"))
                print(f"  {name:5s} run {i}: {seconds[name][-1][0]:.1f} s wall, {seconds[name][-1][1]:.1f} s CPU",
                      flush=True)
    for kind, column in (("wall", 0), ("CPU", 1)):
        paper, both = min(s[column] for s in seconds["paper"]), min(s[column] for s in seconds["both"])
        print(f"{kind}: paper folds alone {paper:.1f} s; paper and family folds with added over names {both:.1f} s; "
              f"ratio {both / paper:.2f}x (target <= {TARGET}x)")


if __name__ == "__main__":
    main()
