"""Opening the bundled snapshot with sha256 verification, against reading the same files unverified.

Target (issue #12): hash verification costs <= 1 s when the bundled snapshot is opened (the time to read its
tables into pandas is the same with or without it, and is the lead's to speed up, see bench_probe.py).
"Opening" reads the manifest and every file a full run reads (each family's tables and auxiliary tables,
the HGNC table, the descriptions). The baseline, measured in the same run, is the same open with every
file's sha256 already in the per-process cache, so nothing is hashed: the difference is what verification
costs. Each figure is the best of five; the verified open clears the sha256 cache first.

It also measures the family-fold check (`genebench.tasks.folds.family_fold_problem`, run before the family scheme's
first use: every task's family folds against the data's HGNC table) against the same baseline open, on a data
object whose files are already read, so the figure is the check alone.

    python benchmarks/bench_open.py
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pyarrow.parquet as pq

import genebench.hashing as hashing
from genebench.constants import SNAPSHOT_DIR
from genebench.data import MANIFEST, BenchmarkData

TARGET_SECONDS = 1.0
REPEATS = 5


def open_all(*, hashed: bool) -> None:
    """Open the snapshot and read every file; `hashed`: with an empty sha256 cache, so each file is hashed."""
    if hashed:
        hashing._SHA256.clear()
    data = BenchmarkData(SNAPSHOT_DIR)
    for family in data.families:
        data.table(family)
        for name in data.manifest["families"][family].get("auxiliary", {}):
            data.auxiliary(family, name)
    data.hgnc()
    pq.read_table(data.descriptions("refseq"))


def family_check() -> float:
    """Seconds of the family-fold check alone: every task loaded under paper folds first, then the family scheme's
    first use, which runs the check (the genebench.probe import it needs is made before timing)."""
    import genebench.probe.validation  # noqa: F401

    data = BenchmarkData(SNAPSHOT_DIR)
    for meta in data.tasks():
        data.load_task(meta.name)
    start = time.perf_counter()
    data.tasks("family")
    return time.perf_counter() - start


def best(func: Callable[[], None]) -> float:
    """Fastest of `REPEATS` wall-clock timings, in seconds."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    """Measure both opens and print each figure with its ratio to the baseline and to the target."""
    size = sum(entry["bytes"] for entry in json.loads((SNAPSHOT_DIR / MANIFEST).read_text())["files"].values())
    open_all(hashed=True)  # fills the sha256 cache the baseline relies on
    baseline = best(lambda: open_all(hashed=False))
    checked = best(lambda: open_all(hashed=True))
    print(f"bundled snapshot: {size / 1e6:.1f} MB in its manifest")
    print(f"  baseline, hashes cached:   {baseline:6.3f} s")
    print(f"  verified open:             {checked:6.3f} s  ({checked / baseline:.2f} x baseline)")
    print(f"  cost of verification:      {checked - baseline:6.3f} s  ({(checked - baseline) / TARGET_SECONDS:.2f} x "
          f"target {TARGET_SECONDS:.0f} s)")
    family = min(family_check() for _ in range(REPEATS))
    print(f"  family-fold check:         {family:6.3f} s  ({family / baseline:.2f} x baseline)")


if __name__ == "__main__":
    main()
