"""A sweep of 4 models over every bundled task: a local run against Ray with 2 CPUs, in one run.

The four models take cheap inputs (seeded random vectors at 64 and 128 dimensions, and two precomputed
tables of 96 and 32), and every embedding is encoded into the cache before timing, so the figures are the
probing and writing of 4 x 132 results. Both engines read the same cache; results must be bit-identical.

A local run probes one unit per core, each with one BLAS thread; on Ray each probe unit takes one CPU and one BLAS
thread (that is what makes their results the local ones to the bit). On 2 cores both run two probes at once, so
there is nothing to gain, and the target is that Ray costs at most 10% over the local time. Ray's start (its
processes and one worker) is timed on its own.

Usage:
    python benchmarks/bench_sweep.py                                         # every bundled task (132)
    python benchmarks/bench_sweep.py --family humantfs hgnc genecorpus reactome   # a quicker subset
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time
from pathlib import Path

SWEEP = """\
models:
  - {input: random, name: bench/random-64, adapter: {dim: 64, seed: 0}}
  - {input: random, name: bench/random-128, adapter: {dim: 128, seed: 1}}
  - {input: precomputed, name: bench/table-96, model: TABLE96}
  - {input: precomputed, name: bench/table-32, model: TABLE32}
"""
TARGET_OVERHEAD = 0.10


def _scores(out: Path) -> dict[tuple[str, str], dict]:
    files = [p for p in out.rglob("*.json") if p.name != "model_meta.json" and "report" not in p.parts]
    return {(r["model"]["id"], r["task"]["name"]): r["scores"] for r in (json.loads(p.read_text()) for p in files)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", nargs="+", metavar="FAMILY", help="only these task families (default: all)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    work = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    os.environ["GENEBENCH_CACHE"] = str(work / "cache")
    from genebench import sweep
    from genebench.cli import main as cli
    from genebench.data import open_data
    from genebench.distributed import RayEngine
    from genebench.pipeline import encode, select_tasks, task_genes

    sweep_file = SWEEP
    for dim, seed in ((96, 2), (32, 3)):
        table = work / f"table-{dim}.parquet"
        (work / f"random-{dim}.yaml").write_text(f"input: random\nadapter: {{dim: {dim}, seed: {seed}}}\n")
        assert cli(["encode", "--config", str(work / f"random-{dim}.yaml"), "--out", str(table)]) == 0
        sweep_file = sweep_file.replace(f"TABLE{dim}", str(table))
    families = f"tasks: {{family: {json.dumps(args.family)}}}\n" if args.family else ""
    (work / "sweep.yaml").write_text(sweep_file + families)
    plan = sweep.Sweep.from_yaml(work / "sweep.yaml")
    data = open_data()
    tasks = select_tasks(data, [meta.name for meta in plan.tasks.select(data)])
    start = time.perf_counter()
    for config in plan.configs:
        encode(config, data, task_genes(tasks))
    print(f"\nwarm-up: {len(plan.configs)} models encoded into the cache in {time.perf_counter() - start:.1f} s")
    n_results = len(plan.configs) * len(tasks)

    start = time.perf_counter()
    sweep.run_sweep(plan, work / "local", progress=False)
    local = time.perf_counter() - start

    start = time.perf_counter()
    with RayEngine(num_cpus=2) as engine:
        engine.connect()  # otherwise the first model's first work would start Ray, inside the timed sweep
        started = time.perf_counter() - start
        start = time.perf_counter()
        sweep.run_sweep(plan, work / "ray", engine=engine, progress=False)
        on_ray = time.perf_counter() - start

    same = _scores(work / "local") == _scores(work / "ray")
    overhead = on_ray - local
    print(f"\n{len(plan.configs)} models x {len(tasks)} tasks = {n_results} results, 2 CPUs "
          f"(one probe unit per CPU, one BLAS thread each), load average {os.getloadavg()[0]:.1f}")
    print(f"local, a unit per core     {local:8.1f} s   (baseline)")
    print(f"Ray, 2 CPUs                {on_ray:8.1f} s   speed-up {local / on_ray:.2f}x")
    print(f"Ray overhead               {overhead:8.1f} s   {overhead / local:+.1%} of the local time "
          f"(target <= {TARGET_OVERHEAD:.0%}): {'met' if overhead / local <= TARGET_OVERHEAD else 'NOT met'}")
    print(f"Ray overhead per result    {1000 * overhead / n_results:8.1f} ms   "
          f"({1000 * local / n_results:.1f} ms of local time per result)")
    print(f"Ray start (not included)   {started:8.1f} s   (instance and one worker, once per command)")
    print(f"scores bit-identical       {'yes' if same else 'NO'} ({n_results} results, every fold of every metric)")


if __name__ == "__main__":
    main()
