"""The main job against the machine's limit: encoding the README's main command's RefSeq descriptions with
all-MiniLM-L6-v2, in one run, each contender in a fresh process.

- The limit: this machine's float32 matrix-product throughput, NumPy GEMMs of MiniLM's own shapes (2,048 tokens
  by 384 -> 1,152, 384 -> 384, 384 -> 1,536 and 1,536 -> 384) on every core at once (one single-threaded BLAS
  per core), measured on the spot before each contender and after the last; a contender's limit is the mean of
  the measurements on either side of it.
- The job: the texts the main command encodes (every gene the bundled tasks need, described as `genebench run`
  describes it), their tokens at MiniLM's 256-token limit, and the FLOPs of one forward pass over them (matrix
  products and attention; 6 layers, 384 wide, 1,536 feed-forward).
- The contenders: genebench's encode in NumPy and on torch (float32; one batch per core, one thread each), torch
  with its own intra-op threads over the same batches, the plain sentence-transformers script
  (`SentenceTransformer(path, device="cpu").encode(texts, batch_size=32)`), and the README's main command, cold
  (a fresh cache and output folder, `--runtime numpy`, as command 1 installs it).

Each contender's line gives its seconds (the encoding alone, wall and CPU, and the whole process), its share of
the limit (the job's FLOPs over its encoding seconds, against the limit), its CPU share (over its encoding's CPU
seconds, against the limit's FLOP per CPU second: what each busy core achieved, less sensitive to other processes
on a shared machine) and its ratio to the plain script; the load average is printed beside every figure, since
only ratios within one run compare on a shared machine. The main command's line splits its whole run into its
encoding (the phase it logs under --debug) and the rest (data, probing, controls, the figure), which does not
grow with the texts: its ratio to the plain script means most on a large subset or the whole job.

    python benchmarks/bench_main_job.py --limit 200     # the first 200 texts (in gene order), every contender
    python benchmarks/bench_main_job.py --limit 2000 --contenders plain main    # the main command vs the plain script
    python benchmarks/bench_main_job.py --contenders plain main --rounds 2      # the whole job, plain main main plain
    python benchmarks/bench_main_job.py --limit 1000 --order longest --contenders plain numpy   # the longest texts
    python benchmarks/bench_main_job.py                 # the whole job (about 40 minutes on 2 AVX2 cores)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
TOKENS = 2048  # rows of the limit's GEMMs: one batch of the runtimes' plan
SHAPES = [(384, 1152), (384, 384), (384, 1536), (1536, 384)]  # MiniLM's matrix products per layer
LAYERS, HIDDEN = 6, 384
PHASES_LOG = "seconds per phase: "  # what `genebench run --debug` logs its phases' seconds after
CONTENDERS = ("plain", "numpy", "torch", "torch-intra-op", "main")
ORDERS = ("genes", "shortest", "middle", "longest")
LABELS = {"plain": "plain sentence-transformers script", "numpy": "genebench encode, NumPy",
          "torch": "genebench encode, torch float32", "torch-intra-op": "  torch, its own intra-op threads",
          "main": "README main command, cold (NumPy)"}


def load() -> str:
    """The 1-minute load average."""
    return Path("/proc/loadavg").read_text().split()[0]


def matmul_limit(seconds: float = 3.0) -> tuple[float, float]:
    """(FLOP/s, FLOP per CPU second of one core) of float32 GEMMs of MiniLM's shapes, one single-threaded BLAS per
    core, all cores at once."""
    from genebench.parallel import core_threads, n_cores

    rng = np.random.default_rng(0)
    inputs = {k: rng.standard_normal((TOKENS, k), dtype=np.float32) for k, _ in SHAPES}
    weights = [rng.standard_normal(shape, dtype=np.float32) for shape in SHAPES]

    def work(_: int) -> tuple[int, float]:
        flops, end, cpu = 0, time.perf_counter() + seconds, time.thread_time()
        while time.perf_counter() < end:
            for w in weights:
                inputs[w.shape[0]] @ w
                flops += 2 * TOKENS * w.shape[0] * w.shape[1]
        return flops, time.thread_time() - cpu

    with core_threads() as pool:
        start = time.perf_counter()
        flops, cpu = np.sum(list(pool.map(work, range(n_cores()))), axis=0)
    return flops / (time.perf_counter() - start), flops / cpu


def job_texts() -> tuple[list[str], list[str]]:
    """(genes, texts) the main command encodes, in gene order."""
    from genebench.data import open_data
    from genebench.pipeline import task_genes
    from model_adapters.description_sources import DescriptionSource

    data = open_data()
    genes = task_genes([data.load_task(m.name) for m in data.tasks()])
    described = DescriptionSource("refseq", hgnc=data.hgnc(), path=data.descriptions("refseq")).describe(genes)
    kept = [g for g in genes if g in described.texts]
    return kept, [described.texts[g] for g in kept]


def subset(lengths: np.ndarray, limit: int | None, order: str) -> np.ndarray:
    """The indices of the texts to run, in gene order: all of them, or `limit` of them picked by `order`."""
    if limit is None or limit >= len(lengths):
        return np.arange(len(lengths))
    if order == "genes":
        return np.arange(limit)
    by_length = np.argsort(lengths, kind="stable")
    start = {"shortest": 0, "middle": (len(lengths) - limit) // 2, "longest": len(lengths) - limit}[order]
    return np.sort(by_length[start:start + limit])


def job_flops(lengths: np.ndarray) -> float:
    """FLOPs of one MiniLM forward pass over texts of these token counts: matrix products and attention."""
    per_token = 2 * sum(k * n for k, n in SHAPES)
    return float(LAYERS * (per_token * lengths.sum() + 4 * HIDDEN * np.square(lengths.astype(np.float64)).sum()))


def worker(kind: str, texts_file: Path, vectors_file: Path) -> None:
    """Encode the texts one way, in this (fresh) process; print {"seconds": ..., "cpu": ...} for the encoding alone
    (wall and CPU seconds, all threads)."""
    from model_adapters.hub import resolve_model

    texts = json.loads(texts_file.read_text())
    path = resolve_model(MODEL)[0]
    start, cpu = time.perf_counter(), time.process_time()
    if kind == "plain":
        from sentence_transformers import SentenceTransformer

        vectors = SentenceTransformer(path, device="cpu").encode(texts, batch_size=32)
    elif kind == "numpy":
        from model_adapters.numpy_encoder import NumpySentenceEncoder

        vectors = NumpySentenceEncoder(path).encode_texts(texts)
    elif kind == "torch":
        from model_adapters.hf import SentenceEncoder

        vectors = SentenceEncoder(path, dtype="float32").encode_texts(texts)
    else:  # torch-intra-op: the same batches one after the other, torch's own threads on every core
        import torch

        from model_adapters.base import plan_batches
        from model_adapters.hf import SentenceEncoder

        encoder = SentenceEncoder(path, dtype="float32")
        model = encoder.model
        tokenized = model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)
        lengths = [len(ids) for ids in tokenized["input_ids"]]
        vectors = np.zeros((len(texts), HIDDEN), dtype=np.float32)
        with torch.inference_mode():
            for batch in plan_batches(lengths, encoder.batch_size, encoder.max_tokens).batches:
                vectors[batch] = model(model.preprocess([texts[i] for i in batch]))["sentence_embedding"].numpy()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    np.save(vectors_file, np.asarray(vectors, dtype=np.float32))
    print(json.dumps({"seconds": seconds, "cpu": cpu}))


def run_contender(kind: str, tmp: Path, genes: list[str]) -> dict[str, float]:
    """Run one contender in a fresh process: its encoding seconds (wall and CPU; for the main command, its encoding
    phase's wall seconds as it logs them) and its whole process's wall and CPU seconds."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    if kind == "main":
        (tmp / "genes.txt").write_text("\n".join(genes) + "\n")
        env["GENEBENCH_CACHE"] = str(tmp / f"cache-{time.monotonic_ns()}")
        command = [sys.executable, "-m", "genebench.cli", "run", "--model", MODEL, "--input", "description",
                   "--runtime", "numpy", "--include-genes", str(tmp / "genes.txt"), "--out",
                   str(tmp / f"results-{time.monotonic_ns()}"), "--debug"]
    else:
        command = [sys.executable, __file__, "--worker", kind, "--texts", str(tmp / "texts.json"),
                   "--vectors", str(tmp / f"{kind}.npy")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"{kind}: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if kind == "main":  # it logs "seconds per phase: {...}" under --debug ("read" is its encoding), not CPU seconds
        phases = json.loads(done.stderr.rsplit(PHASES_LOG, 1)[1].splitlines()[0])
        return {"encoding": phases["read"], "encoding_cpu": float("nan"), "wall": wall, "cpu": cpu}
    encoding = json.loads(done.stdout.strip().splitlines()[-1])
    return {"encoding": encoding["seconds"], "encoding_cpu": encoding["cpu"], "wall": wall, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, help="run every contender on the first N texts (gene order)")
    parser.add_argument("--order", choices=ORDERS, default="genes",
                        help="which texts --limit takes: the first in gene order (default), the shortest, those "
                             "around the median token count, or the longest; a subset's share of short texts sets "
                             "how far the runtimes part")
    parser.add_argument("--contenders", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the contenders this many times, in reverse order every other round (the table "
                             "shows each contender's mean), so a machine that slows or speeds up over the run "
                             "weighs on every contender alike (default 1)")
    parser.add_argument("--worker", choices=CONTENDERS[:-1], help=argparse.SUPPRESS)
    parser.add_argument("--texts", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--vectors", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.texts, args.vectors)
        return

    from model_adapters.hub import resolve_model
    from model_adapters.numpy_encoder import NumpySentenceEncoder

    genes, texts = job_texts()
    tokenizer = NumpySentenceEncoder(resolve_model(MODEL)[0]).tokenizer
    lengths = np.array([len(e.ids) for e in tokenizer.encode_batch(texts)])
    picked = subset(lengths, args.limit, args.order)
    genes, texts, lengths = [genes[i] for i in picked], [texts[i] for i in picked], lengths[picked]
    flops = job_flops(lengths)
    chosen = f" ({args.order} {args.limit:,})" if args.limit else ""
    print(f"machine: {os.cpu_count()} cores; the job{chosen}: {len(texts):,} texts, {lengths.sum():,} tokens (mean "
          f"{lengths.mean():.0f}, {(lengths >= 256).mean():.1%} truncated at 256), {flops / 1e12:.2f} TFLOP")
    with tempfile.TemporaryDirectory(prefix="genebench-bench-") as folder:
        tmp = Path(folder)
        (tmp / "texts.json").write_text(json.dumps(texts))
        limits, runs = [matmul_limit()], {kind: [] for kind in args.contenders}
        print(f"matmul limit: {limits[0][0] / 1e9:6.1f} GFLOP/s, {limits[0][1] / 1e9:5.1f} GFLOP per CPU s "
              f"(load {load()})", flush=True)
        for round_ in range(args.rounds):
            for kind in args.contenders[::-1] if round_ % 2 else args.contenders:  # A B, B A, ...: drift hits both
                run = run_contender(kind, tmp, genes)
                limits.append(matmul_limit())
                run["limit"], run["limit_cpu"] = np.mean(limits[-2:], axis=0)
                run["load"] = float(load())
                runs[kind].append(run)
                wall_limit, cpu_limit = limits[-1]
                print(f"{LABELS[kind]:<36} done: {run['encoding']:7.1f} s, process {run['wall']:7.1f} s; matmul limit "
                      f"{wall_limit / 1e9:6.1f} GFLOP/s, {cpu_limit / 1e9:5.1f} per CPU s (load {load()})", flush=True)
        figures = {kind: {key: float(np.mean([run[key] for run in done])) for key in done[0]}
                   for kind, done in runs.items()}
        plain = figures.get("plain")
        reference = np.load(tmp / "plain.npy") if plain else None
        print(f"\n{'contender':<36} {'encoding s':>10} {'CPU s':>7} {'process s':>9} {'limit GF/s':>10} {'share':>6} "
              f"{'CPU share':>9} {'x plain':>7} {'load':>5}  cosine distance to plain")
        for kind, f in figures.items():
            share, cpu_share = flops / f["encoding"] / f["limit"], flops / f["encoding_cpu"] / f["limit_cpu"]
            ratio = f"{f['wall'] / plain['wall']:.2f}" if plain and kind == "main" else (
                f"{f['encoding'] / plain['encoding']:.2f}" if plain else "-")
            distance = ""
            if reference is not None and (tmp / f"{kind}.npy").exists():
                mine = np.load(tmp / f"{kind}.npy")
                cosine = (mine * reference).sum(1) / np.linalg.norm(mine, axis=1) / np.linalg.norm(reference, axis=1)
                distance = f"{float((1 - cosine).max()):.1e}"
            cpu, cpu_share = (f"{f['encoding_cpu']:.1f}", f"{cpu_share:.1%}") if kind != "main" else ("-", "-")
            print(f"{LABELS[kind]:<36} {f['encoding']:10.1f} {cpu:>7} {f['wall']:9.1f} {f['limit'] / 1e9:10.1f} "
                  f"{share:6.1%} {cpu_share:>9} {ratio:>7} {f['load']:5.2f}  {distance}")
    if "main" in figures:
        main_run = figures["main"]
        print(f"\nmain command: {main_run['wall']:.1f} s in all ({main_run['cpu']:.1f} CPU s), of which encoding "
              f"{main_run['encoding']:.1f} s and the rest (data, probing, controls, figure) "
              f"{main_run['wall'] - main_run['encoding']:.1f} s" + (
                  f"; the plain script's process: {plain['wall']:.1f} s ({plain['cpu']:.1f} CPU s)" if plain else ""))
    if args.rounds > 1:
        print(f"\nevery figure is the mean of {args.rounds} rounds, the contenders in reverse order every other round")
    print("\nshare: the job's FLOPs over the encoding's wall seconds, against the limit; CPU share: over its CPU "
          "seconds, against the limit's FLOP per CPU second (less sensitive to other processes on the machine). "
          "x plain: encoding seconds over the plain script's; for the main command, its whole process over the plain "
          "script's whole process. Targets (issue 24): main command <= 0.8x plain; both runtimes >= 60% of the "
          "limit; NumPy no slower than torch.")


if __name__ == "__main__":
    main()
