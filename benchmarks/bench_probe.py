"""Probe-stage speed and agreement: genebench's batched engine against per-task scikit-learn, in one run.

The baseline is the reference's protocol: per task and fold, ``StandardScaler`` + ``LogisticRegression(
max_iter=5000, C)`` (wrapped in ``MultiOutputClassifier`` for multi-label tasks; every derived binary task
fitted on its own). It is far too slow to run on every task, so it runs on a subset and its full-set time
is extrapolated per task type from seconds per (row x fitted column x fold); the output says so.

Usage:
    python benchmarks/bench_probe.py                       # synthetic tasks shaped like the reference set
    python benchmarks/bench_probe.py --data DIR            # built genebench data (genebench build)
    python benchmarks/bench_probe.py --embeddings emb.parquet --data DIR   # real embeddings (GeneEmbeddings)
"""

from __future__ import annotations

import argparse
import logging
import resource
import time

import numpy as np

from genebench.embeddings import GeneEmbeddings
from genebench.metrics import roc_auc
from genebench.model_info import ModelInfo
from genebench.probe import ProbeSettings, iter_task_scores
from genebench.tasks.folds import stratified_folds
from genebench.tasks.metadata import TaskMetadata
from genebench.tasks.task import Task


def _meta(name: str, type_: str, labels: tuple[str, ...], **extra) -> TaskMetadata:
    return TaskMetadata(name=name, category="biological processes", type=type_, family="synthetic",
                        label_names=labels, source_url="synthetic", source_version="0", license="CC0",
                        citation="synthetic", **extra)


def synthetic(n_genes: int, dim: int, seed: int) -> tuple[GeneEmbeddings, list[Task]]:
    """Embeddings with low-rank structure and ~357 tasks shaped like the reference set (fixed seed)."""
    rng = np.random.default_rng(seed)
    genes = np.array([f"G{i:05d}" for i in range(n_genes)], dtype=object)
    latent = rng.normal(size=(n_genes, 48))
    spectrum = 1.0 / np.sqrt(np.arange(1, 49))
    vectors = (latent * spectrum) @ rng.normal(size=(48, dim)) + 0.15 * rng.normal(size=(n_genes, dim))
    model = ModelInfo(id="genebench/synthetic", input="random")
    embeddings = GeneEmbeddings(genes, vectors.astype(np.float32), model=model)

    def signal(rows: np.ndarray, n_out: int) -> np.ndarray:
        return latent[rows] @ rng.normal(size=(48, n_out)) / 4 + rng.normal(size=(len(rows), n_out))

    def folds_for(classes: np.ndarray) -> np.ndarray:
        return stratified_folds(classes, 5, rng)

    tasks: list[Task] = []
    for t in range(30):  # multi-label parents, each with derived binary tasks for its commoner labels
        n, n_labels = int(rng.integers(3000, n_genes)), int(rng.integers(20, 71))
        rows = np.sort(rng.choice(n_genes, n, replace=False))
        scores = signal(rows, n_labels)
        prevalence = rng.uniform(0.01, 0.15, n_labels)
        cut = np.array([np.quantile(scores[:, j], 1 - prevalence[j]) for j in range(n_labels)])
        labels = (scores > cut).astype(np.uint8)
        names = tuple(f"L{j}" for j in range(n_labels))
        folds = rng.integers(0, 5, n).astype(np.int8)
        parent = Task(_meta(f"multi{t}", "multi-label", names), genes[rows], labels, folds)
        tasks.append(parent)
        for j in np.flatnonzero(prevalence > 0.09)[:8]:
            tasks.append(Task(_meta(f"multi{t};L{j}", "derived binary", ("no", "yes"), parent=parent.name),
                              genes[rows], labels[:, j].astype(np.int64), folds))
    for t in range(60):
        n = int(np.exp(rng.uniform(np.log(150), np.log(n_genes))))
        rows = np.sort(rng.choice(n_genes, n, replace=False))
        labels = (signal(rows, 1)[:, 0] > np.quantile(signal(rows, 1)[:, 0], rng.uniform(0.5, 0.9))).astype(np.int64)
        labels = (signal(rows, 1)[:, 0] > 0.8).astype(np.int64) if labels.sum() < 10 else labels
        tasks.append(Task(_meta(f"bin{t}", "binary", ("no", "yes")), genes[rows], labels, folds_for(labels)))
    for t in range(25):
        n, k = int(rng.integers(500, n_genes)), int(rng.integers(3, 21))
        rows = np.sort(rng.choice(n_genes, n, replace=False))
        labels = np.argmax(signal(rows, k), axis=1)
        tasks.append(Task(_meta(f"cat{t}", "categorical", tuple(f"c{j}" for j in range(k))), genes[rows], labels,
                          folds_for(labels)))
    for t in range(10):
        n = int(rng.integers(5000, 50000))
        a, b = rng.integers(0, n_genes, n), rng.integers(0, n_genes, n)
        score = signal(a, 1)[:, 0] + signal(b, 1)[:, 0]
        labels = (score > np.median(score)).astype(np.int64)
        tasks.append(Task(_meta(f"pair{t}", "gene-pair binary", ("no", "yes"), entity_types=("gene", "gene")),
                          np.stack([genes[a], genes[b]], axis=1), labels, folds_for(labels)))
    for t in range(2):
        rows = np.sort(rng.choice(n_genes, 8000, replace=False))
        tasks.append(Task(_meta(f"reg{t}", "regression", ()), genes[rows], signal(rows, 1)[:, 0],
                          (np.arange(8000) % 5).astype(np.int8)))
    return embeddings, tasks


def from_data(path: str, embeddings_file: str | None, dim: int, seed: int) -> tuple[GeneEmbeddings, list[Task]]:
    """Every built task, with real embeddings if given, else random-structured ones over the tasks' genes."""
    from genebench.data import open_data

    data = open_data(path)
    tasks = [data.load_task(meta.name) for meta in data.tasks()]
    if embeddings_file:
        return GeneEmbeddings.load(embeddings_file), tasks
    genes = np.unique(np.concatenate([task.genes() for task in tasks]))
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(len(genes), 48)) @ rng.normal(size=(48, dim)) + 0.15 * rng.normal(size=(len(genes), dim))
    model = ModelInfo(id="genebench/random", input="random")
    return GeneEmbeddings(genes, vectors.astype(np.float32), model=model), tasks


def _units(task: Task) -> float:
    """Cost units of the per-task baseline: rows x fitted columns x folds."""
    columns = task.labels.shape[1] if task.metadata.type == "multi-label" else 1
    return len(task.folds) * columns * task.n_splits


def _group(task: Task) -> str:
    kind = task.metadata.type
    return "binary" if kind in ("binary", "derived binary") else kind


def sklearn_task(task: Task, embeddings: GeneEmbeddings, C: float) -> float:
    """The reference protocol on one task; returns its mean AUC over folds."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.multioutput import MultiOutputClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    index = {s: i for i, s in enumerate(embeddings.symbols)}
    entities = task.entities if task.entities.ndim == 2 else task.entities[:, None]
    rows = np.array([[index.get(s, -1) for s in row] for row in entities])
    keep = (rows >= 0).all(axis=1)
    X = embeddings.vectors[rows[keep]].mean(axis=1)
    y, folds = task.labels[keep], task.folds[keep]
    aucs = []
    for k in range(int(folds.max()) + 1):
        train, test = folds != k, folds == k
        model = LogisticRegression(C=C, max_iter=5000)
        if task.metadata.type == "multi-label":
            model = MultiOutputClassifier(model)
        pipe = make_pipeline(StandardScaler(), model).fit(X[train], y[train])
        proba = pipe.predict_proba(X[test])
        if task.metadata.type == "multi-label":
            proba = np.stack([p[:, 1] for p in proba], axis=1)
        elif task.metadata.type != "categorical":
            proba = proba[:, 1]
        aucs.append(roc_auc(y[test], proba, task_type=task.metadata.type))
    return float(np.mean(aucs))


def pick_baseline(tasks: list[Task], per_group: int) -> list[Task]:
    """The smallest `per_group` non-regression tasks of each type group (deterministic)."""
    chosen = []
    for group in ("multi-label", "binary", "categorical", "gene-pair binary"):
        members = sorted((t for t in tasks if _group(t) == group), key=lambda t: (_units(t), t.name))
        chosen += members[:per_group]
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="a built genebench data folder (default: synthetic tasks)")
    parser.add_argument("--embeddings", help="a GeneEmbeddings parquet file (with --data)")
    parser.add_argument("--genes", type=int, default=19000, help="synthetic gene universe (default 19000)")
    parser.add_argument("--dim", type=int, default=768, help="synthetic embedding dimension (default 768)")
    parser.add_argument("--baseline-per-type", type=int, default=2,
                        help="sklearn tasks per type group; 0 skips the baseline (default 2)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    start = time.perf_counter()
    embeddings, tasks = (from_data(args.data, args.embeddings, args.dim, args.seed) if args.data
                         else synthetic(args.genes, args.dim, args.seed))
    counts = ", ".join(f"{g}: {sum(_group(t) == g for t in tasks)}" for g in sorted({_group(t) for t in tasks}))
    print(f"tasks: {len(tasks)} ({counts}); genes: {len(embeddings.symbols)}; dim: {embeddings.dim}; "
          f"setup {time.perf_counter() - start:.1f}s")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    settings = ProbeSettings(device=args.device)

    start = time.perf_counter()
    ours = {r.task.name: r for r in iter_task_scores(tasks, embeddings, settings)}
    engine_s = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    skipped = sum(r.skipped is not None for r in ours.values())
    print(f"genebench engine, all {len(tasks)} tasks: {engine_s:.1f}s ({skipped} skipped); "
          f"peak RSS {peak:.0f} MiB (before the probe stage {rss_before:.0f} MiB)")

    baseline = pick_baseline(tasks, args.baseline_per_type)
    if not baseline:
        return
    sk_seconds, our_seconds, diffs, rates = 0.0, 0.0, [], {}
    for task in baseline:
        t0 = time.perf_counter()
        reference = sklearn_task(task, embeddings, settings.C)
        took = time.perf_counter() - t0
        sk_seconds += took
        our_seconds += ours[task.name].seconds
        rates.setdefault(_group(task), []).append((took, _units(task)))
        diff = abs(reference - ours[task.name].scores["roc_auc"].mean)
        diffs.append(diff)
        print(f"  {task.name:>12} ({task.metadata.type}, n={len(task.folds)}): sklearn {took:7.1f}s auc {reference:.4f}"
              f" | genebench {ours[task.name].seconds:6.2f}s auc {ours[task.name].scores['roc_auc'].mean:.4f}"
              f" | diff {diff:.5f}")
    rate = {g: sum(s for s, _ in v) / sum(u for _, u in v) for g, v in rates.items()}
    extrapolated = sum(_units(t) * rate.get(_group(t), 0.0) for t in tasks if _group(t) in rate)
    print(f"sklearn baseline measured on {len(baseline)} tasks: {sk_seconds:.1f}s vs genebench {our_seconds:.2f}s "
          f"on the same tasks -> {sk_seconds / max(our_seconds, 1e-9):.1f}x")
    print(f"sklearn full set (extrapolated per type from seconds per row x column x fold; regression excluded): "
          f"{extrapolated:.0f}s -> ratio {extrapolated / engine_s:.1f}x")
    print(f"largest |mean AUC difference| on the baseline tasks: {max(diffs):.5f}")


if __name__ == "__main__":
    main()
