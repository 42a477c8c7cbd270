"""Build times from ../shared/data (the five foundation families, PerturbQA alone, all nine) and load times.

Targets: the five foundation families < 60 s (issue #2); nine families < 180 s and PerturbQA < 60 s (issue #5);
loading a built family < 1 s.
Builds skip the control baselines (`benchmarks/bench_controls.py` times those).
Open Targets has no local release in ../shared/data, so it is built from tests/fixtures/opentargets.
Each figure is printed with its ratio to the target, and the PerturbQA build with its ratio to a baseline
measured in the same run: reading its ten CSV files with pandas.

    python benchmarks/bench_build.py
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import logging  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

from genebench.build import build_data  # noqa: E402
from genebench.data import BenchmarkData  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
LOCAL = ["humantfs", "hgnc", "genecorpus", "reactome", "gene2gene", "hpa", "uniprot_keywords", "perturbqa"]
FOUNDATION = ["humantfs", "hgnc", "genecorpus", "reactome", "gene2gene"]
TARGETS = {"five families": 60.0, "nine families": 180.0, "perturbqa": 60.0, "load reactome": 1.0,
           "load perturbqa": 1.0}


def _timed(label: str, func) -> float:  # noqa: ANN001
    start = time.perf_counter()
    func()
    seconds = time.perf_counter() - start
    target = TARGETS.get(label)
    suffix = f"  ({seconds / target:.2f} x target {target:.0f} s)" if target else ""
    print(f"{label:>22}: {seconds:7.2f} s{suffix}")
    return seconds


def main() -> None:
    """Run the three measurements and print them."""
    logging.disable(logging.WARNING)
    if not SHARED.is_dir():
        raise SystemExit(f"bench_build needs the source snapshots in {SHARED}.")
    out = Path(tempfile.mkdtemp(prefix="genebench-bench-"))
    hgnc = SHARED / "hgnc" / "hgnc_complete_set.txt.gz"
    try:
        _timed("five families", lambda: build_data(out / "five", FOUNDATION, sources_dir=SHARED, controls=False,
                                                   progress=False))
        _timed("load reactome", lambda: BenchmarkData(out / "five").load_task("Pathways;Immune System"))
        csvs = sorted((SHARED / "perturbqa").glob("*.csv"))
        baseline = _timed("baseline: read CSVs", lambda: [pd.read_csv(p, dtype=str) for p in csvs])
        alone = _timed("perturbqa", lambda: build_data(out / "pqa", ["perturbqa"], sources_dir=SHARED,
                                                          controls=False, progress=False))
        print(f"{'':>22}  ({alone / baseline:.1f} x the CSV-reading baseline)")

        def nine() -> None:
            build_data(out / "all", LOCAL, sources_dir=SHARED, controls=False, progress=False)
            build_data(out / "all", ["opentargets"], sources_dir=ROOT / "tests" / "fixtures", hgnc=hgnc,
                       controls=False, progress=False)

        _timed("nine families", nine)
        _timed("load perturbqa", lambda: BenchmarkData(out / "all").load_task("PerturbQA k562 de"))
        sizes = subprocess.run(["du", "-sh", *sorted(str(p) for p in (out / "all").iterdir() if p.is_dir())],
                               capture_output=True, text=True).stdout
        print("on-disk size per family:\n" + sizes)
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
