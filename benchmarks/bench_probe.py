"""Probe-stage speed and agreement: genebench's batched engine against scikit-learn's per-fold loop, in one run.

The baseline is the paper's protocol, measured here, never extrapolated: per task and fold,
`LogisticRegression(max_iter=5000)` on the raw features (`MultiOutputClassifier` for multi-label tasks; every
derived binary task fitted on its own, as the reference does). Both sides get the same vectors, rows and folds,
and are scored with genebench's metrics. The vectors are real: all-MiniLM-L6-v2 over the bundled RefSeq
descriptions (read from the embedding cache, encoded once if absent).

A task's AUC is the mean over its folds, as the paper reports it; the accuracy target (within 0.005 of the
paper's loop) is checked on it, and the largest per-fold difference is printed beside it. Multi-label tasks are
also checked per label column, through their derived binary tasks (genebench scores those from the parent's
fit; scikit-learn fits each alone).

The measured subset holds every task type: all categorical tasks, three multi-label tasks with their derived
tasks, Gene2Gene, four PerturbQA tasks and every other binary task. Then genebench alone is timed on all bundled
tasks at 384-d and at 768-d (the MiniLM vectors beside a fixed random tanh projection of them, a stand-in for a
768-d model), with the peak memory of each.

    python benchmarks/bench_probe.py                  # the whole benchmark (~15 min on 2 cores)
    python benchmarks/bench_probe.py --no-baseline    # genebench alone on all tasks
    python benchmarks/bench_probe.py --embeddings emb.parquet   # other vectors (GeneEmbeddings parquet)
    python benchmarks/bench_probe.py --scale-sweep    # main score vs scikit-learn's exact optimum, x1e-6 .. x1e9
    python benchmarks/bench_probe.py --scale-sweep --scales 1e6 1e9   # the sweep at those scales only

The scale sweep multiplies the vectors by 1e-6 .. 1e9 (real models have norms from below 1 to thousands; the ends
are there to find where the probe breaks) on one task of every type and compares genebench's default probe on the
raw features with scikit-learn's exact optimum of the same objective (newton-cholesky at tol 1e-12 on the unscaled
vectors at C * scale**2, the same problem, so the reference is not stopped early by the scale); target: within
0.005 on every fold, or the task's probes marked unconverged (the probe counts unconverged probes per task, not
per fold).
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import re
import resource
import time
import warnings
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from genebench.data import open_data
from genebench.embeddings import GeneEmbeddings
from genebench.metrics import classification_scores
from genebench.model_info import ModelInfo
from genebench.probe import ProbeSettings, iter_task_scores
from genebench.tasks.task import Task

MULTI_LABEL = ("Protein class", "UniProt keyword Ligand", "UniProt keyword Technical term")
PERTURBQA = ("PerturbQA k562 dir", "PerturbQA rpe1 dir", "PerturbQA hepg2 dir", "PerturbQA jurkat dir")
TARGETS = {"type": 5.0, "subset": 20.0, "all 384-d": 30.0, "all 768-d": 60.0, "peak GiB 768-d": 2.0, "auc": 0.005}


def minilm_embeddings(data, names: Sequence[str] | None = None) -> GeneEmbeddings:
    """all-MiniLM-L6-v2 over RefSeq descriptions for every gene the bundled tasks (or the tasks `names`) need (the
    embedding cache)."""
    from genebench.pipeline import RunConfig, encode, task_genes

    tasks = [data.load_task(name) for name in names or [meta.name for meta in data.tasks()]]
    config = RunConfig(model="sentence-transformers/all-MiniLM-L6-v2", input="description")
    return encode(config, data, task_genes(tasks))


def widened(embeddings: GeneEmbeddings, dim: int) -> GeneEmbeddings:
    """The vectors beside a fixed random tanh projection of them: a `dim`-wide table with the same genes."""
    rng = np.random.default_rng(0)
    extra = np.tanh(embeddings.vectors @ rng.normal(size=(embeddings.dim, dim - embeddings.dim)).astype(np.float32))
    vectors = np.hstack([embeddings.vectors, extra]).astype(np.float32)
    model = ModelInfo(id=f"genebench/minilm-widened-{dim}", input="random", dim=dim)
    return GeneEmbeddings(embeddings.symbols, vectors, model=model)


def group(task: Task) -> str:
    """The task type as the benchmark reports it."""
    if task.metadata.evaluation == "train-test":
        return "PerturbQA"
    return task.metadata.type


def subset(data) -> list[Task]:
    """Every categorical and binary task, three multi-label tasks with their derived tasks, Gene2Gene and four
    PerturbQA tasks (the gene-set PerturbQA tasks need partner vectors, so they are not among them)."""
    chosen = []
    for meta in data.tasks():
        train_test = meta.evaluation == "train-test"
        keep = (meta.type in ("categorical", "gene-pair binary") or (meta.type == "binary" and not train_test)
                or meta.name in MULTI_LABEL or meta.parent in MULTI_LABEL or meta.name in PERTURBQA)
        if keep:
            chosen.append(data.load_task(meta.name))
    return chosen


def features(task: Task, embeddings: GeneEmbeddings, settings: ProbeSettings) -> tuple[np.ndarray, np.ndarray]:
    """The covered rows' feature matrix, as genebench builds it (pair vectors: mean, or concat when ordered),
    and which rows are covered."""
    index = {s: i for i, s in enumerate(np.asarray(embeddings.symbols, dtype=str))}
    entities = task.entities if task.entities.ndim == 2 else task.entities[:, None]
    rows = np.array([[index.get(str(s), -1) for s in row] for row in entities])
    covered = (rows >= 0).all(axis=1)
    parts = [embeddings.vectors[rows[covered, j]] for j in range(rows.shape[1])]
    if len(parts) == 1:
        return parts[0], covered
    mode = settings.ordered_pair_mode if task.metadata.evaluation == "train-test" else settings.pair_mode
    return (np.hstack(parts) if mode == "concat" else (parts[0] + parts[1]) / 2), covered


def sklearn_scores(task: Task, embeddings: GeneEmbeddings, settings: ProbeSettings, *,
                   exact: bool = False, C: float | None = None) -> list[float]:
    """The paper's loop on one task: per-fold main scores (at `C`, default the settings').

    With `exact`, each fold is solved to scikit-learn's exact optimum instead (newton-cholesky, tol 1e-12): the
    yardstick when genebench and the paper's lbfgs loop disagree, since lbfgs stops at its `ftol` first.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.multioutput import MultiOutputClassifier

    X, covered = features(task, embeddings, settings)
    X = X.astype(np.float64) if exact else X  # a float32 fit under a strong ridge rounds its scores into ties
    y, folds = task.labels[covered], task.fold_ids[covered]
    kind = "binary" if task.metadata.type == "derived binary" else task.metadata.type
    readout = task.entities[covered, 1] if task.metadata.evaluation == "train-test" else None
    main = "auc_per_gene" if readout is not None else "roc_auc"
    solver = {"solver": "newton-cholesky", "tol": 1e-12, "max_iter": 1000} if exact else {"max_iter": 5000}
    scores = []
    for k in range(int(folds.max()) + 1):
        train, test = folds != k, folds == k
        model = LogisticRegression(C=settings.C if C is None else C, **solver)
        model = MultiOutputClassifier(model) if kind == "multi-label" else model
        model.fit(X[train], y[train])
        if exact:  # logits: probabilities round to the prior under a strong ridge, and AUC only needs the ranking
            proba = np.stack([e.decision_function(X[test]) for e in model.estimators_], axis=1) \
                if kind == "multi-label" else model.predict_log_proba(X[test]) if kind == "categorical" \
                else model.decision_function(X[test])
        else:
            proba = model.predict_proba(X[test])
            if kind == "multi-label":
                proba = np.stack([p[:, 1] for p in proba], axis=1)
            elif kind != "categorical":
                proba = proba[:, 1]
        groups = None if readout is None else readout[test]
        scores.append(classification_scores(y[test], proba, task_type=kind, groups=groups)[main])
    return scores


def timed_engine(tasks: list[Task], embeddings: GeneEmbeddings, settings: ProbeSettings) -> tuple[dict, float]:
    """genebench's results by task name, and the wall seconds of the whole probe stage."""
    start = time.perf_counter()
    results = {r.task.name: r for r in iter_task_scores(tasks, embeddings, settings)}
    return results, time.perf_counter() - start


def peak_gib() -> float:
    """This process's peak resident memory: VmHWM, which restarts at exec (ru_maxrss would carry over the forking
    parent's peak into a spawned child), else ru_maxrss."""
    try:
        status = Path("/proc/self/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024**2
    except (OSError, AttributeError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def compare(tasks: list[Task], embeddings: GeneEmbeddings, settings: ProbeSettings) -> None:
    """Per type: scikit-learn's seconds, genebench's, the speed-up and the largest |AUC difference|, per task (the
    target) and per fold.

    Where a task misses the AUC target against the paper's loop, both sides are also compared with the exact
    optimum, to say which of the two stopped short of it.
    """
    ours, our_total = timed_engine(tasks, embeddings, settings)
    seconds: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    worst: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    misses = []
    for task in tasks:
        start = time.perf_counter()
        reference = np.array(sklearn_scores(task, embeddings, settings))
        took = time.perf_counter() - start
        mine = ours[task.name]
        kind = group(task)
        seconds[kind][0] += took
        seconds[kind][1] += mine.seconds
        folds = np.array(mine.scores[mine.main_score].folds)
        diff, fold_diff = abs(float(reference.mean() - folds.mean())), float(np.max(np.abs(reference - folds)))
        worst[kind] = [max(worst[kind][0], diff), max(worst[kind][1], fold_diff)]
        print(f"  {task.name[:44]:<44} {kind:<16} sklearn {took:7.2f}s | genebench {mine.seconds:6.2f}s | "
              f"task |dAUC| {diff:.4f}, max fold {fold_diff:.4f}", flush=True)
        if diff > TARGETS["auc"]:
            exact = np.array(sklearn_scores(task, embeddings, settings, exact=True))
            misses.append((task.name, diff, abs(float(reference.mean() - exact.mean())),
                           abs(float(folds.mean() - exact.mean()))))
    print(f"\n{'type':<16} {'tasks':>5} {'sklearn s':>10} {'genebench s':>12} {'speed-up':>9} "
          f"{'task |dAUC|':>12} {'fold |dAUC|':>12}")
    for kind in sorted(seconds):
        (sk, gb), (diff, fold_diff) = seconds[kind], worst[kind]
        n = sum(group(t) == kind for t in tasks)
        print(f"{kind:<16} {n:>5} {sk:>10.1f} {gb:>12.2f} {sk / gb:>8.1f}x {diff:>12.4f} {fold_diff:>12.4f}  "
              f"(target >= {TARGETS['type']:.0f}x: {verdict(sk / gb >= TARGETS['type'])}; "
              f"task |dAUC| <= {TARGETS['auc']}: {verdict(diff <= TARGETS['auc'])})")
    sk_total = sum(s for s, _ in seconds.values())
    print(f"{'subset':<16} {len(tasks):>5} {sk_total:>10.1f} {our_total:>12.2f} {sk_total / our_total:>8.1f}x "
          f"(target >= {TARGETS['subset']:.0f}x: {verdict(sk_total / our_total >= TARGETS['subset'])})\n")
    for name, diff, sklearn_off, ours_off in misses:
        print(f"{name}: task |dAUC| {diff:.4f} to the paper's loop; from the exact optimum's AUC (newton-cholesky, "
              f"tol 1e-12), the paper's loop is {sklearn_off:.4f} away and genebench {ours_off:.4f}")


def all_tasks(path: str | None, dim: int, scale: str) -> tuple[int, float, float, list[str]]:
    """genebench alone on every bundled task at `dim`: (tasks, seconds, peak GiB, a line per task type). Run in a
    fresh process, so the peak is the probe stage's own and not the scikit-learn loop's."""
    logging.basicConfig(level=logging.ERROR)
    warnings.filterwarnings("ignore")
    data = open_data()
    embeddings = GeneEmbeddings.load(path) if path else minilm_embeddings(data)
    embeddings = embeddings if dim == embeddings.dim else widened(embeddings, dim)
    everything = [data.load_task(meta.name) for meta in data.tasks()]
    results, seconds = timed_engine(everything, embeddings, ProbeSettings(scale=scale, device="cpu"))
    by_type = defaultdict(list)
    for result in results.values():
        by_type[group(result.task)].append((result.seconds, result.task.name))
    lines = [f"  {kind:<16} {len(times):>3} tasks: total {sum(t for t, _ in times):6.2f}s, median "
             f"{np.median([t for t, _ in times]):5.2f}s, largest {max(times)[0]:5.2f}s ({max(times)[1]})"
             for kind, times in sorted(by_type.items())]
    return len(everything), seconds, peak_gib(), lines


SWEEP_SCALES = (1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9)
SWEEP_TASKS = ("HLA class I vs class II", "TF vs non-TF", "bivalent vs Lys4-only-methylated",
               "UniProt keyword Ligand", "UniProt keyword Ligand;GTP-binding", "RNA cancer specificity",
               "Gene2Gene (cold genes)", "PerturbQA rpe1 dir")
"""One task of every type: binary (the smallest, 44 genes, and larger), multi-label with a derived binary task,
categorical, gene pairs and a train-test pair task."""


def scale_sweep(data, embeddings: GeneEmbeddings, settings: ProbeSettings,
                scales: Sequence[float] = SWEEP_SCALES) -> None:
    """genebench's main score on each fold against the exact optimum at each feature scale, with its iterations and
    convergence.

    The raw-feature objective on vectors x s at C is the one on the vectors themselves at C * s**2 (w' = s w), so
    the reference is scikit-learn's exact optimum (newton-cholesky, tol 1e-12) on the unscaled vectors at C * s**2:
    it is not stopped early by the scale itself. A fold genebench marks unconverged meets the target by saying so.
    """
    tasks = [data.load_task(name) for name in SWEEP_TASKS]
    print(f"\nscale sweep: {len(tasks)} tasks of every type, vectors x{', x'.join(f'{s:g}' for s in scales)} "
          f"(target: |score - exact| <= {TARGETS['auc']} on every fold, or the task's probes marked unconverged)")
    print(f"{'scale':>7} {'task':<38} {'type':<16} {'genebench':>9} {'exact':>7} {'fold |diff|':>11} {'iters':>5} "
          f"{'converged':>9} {'seconds':>7}")
    worst, missed = 0.0, []
    for scale in scales:
        scaled = GeneEmbeddings(embeddings.symbols, embeddings.vectors.astype(np.float64) * scale,
                                model=embeddings.model)
        for task in tasks:
            start = time.perf_counter()
            (result,) = iter_task_scores([task], scaled, settings)
            seconds = time.perf_counter() - start
            exact = sklearn_scores(task, embeddings, settings, exact=True, C=settings.C * scale**2)
            ours, bad = result.scores[result.main_score].folds, result.diagnostics.get("n_not_converged", 0)
            diff = float(np.max(np.abs(np.subtract(ours, exact))))  # the farthest fold
            worst = max(worst, diff) if bad == 0 else worst
            if diff > TARGETS["auc"] and bad == 0:
                missed.append(f"x{scale:g} {task.name}")
            print(f"{scale:>7g} {task.name[:38]:<38} {task.metadata.type:<16} {np.mean(ours):>9.4f} "
                  f"{np.mean(exact):>7.4f} {diff:>11.4f} {result.diagnostics.get('n_iter_max', 0):>5} "
                  f"{'all' if bad == 0 else f'{bad} not':>9} {seconds:>7.2f}", flush=True)
    print(f"largest fold |score - exact| among tasks recorded converged {worst:.4f} (target <= {TARGETS['auc']}: "
          f"{verdict(not missed)}){'; missed: ' + ', '.join(missed) if missed else ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embeddings", help="a GeneEmbeddings parquet (default: MiniLM over descriptions)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the scikit-learn comparison")
    parser.add_argument("--scale", choices=("none", "standard"), default="none")
    parser.add_argument("--scale-sweep", action="store_true",
                        help="only the sweep of feature scales against scikit-learn's exact optimum")
    parser.add_argument("--scales", type=float, nargs="+", default=SWEEP_SCALES, metavar="S",
                        help=f"the sweep's feature scales (default: {' '.join(f'{s:g}' for s in SWEEP_SCALES)})")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    warnings.filterwarnings("ignore")

    start = time.perf_counter()
    data = open_data()
    names = SWEEP_TASKS if args.scale_sweep else None
    embeddings = GeneEmbeddings.load(args.embeddings) if args.embeddings else minilm_embeddings(data, names)
    settings = ProbeSettings(scale=args.scale, device="cpu")
    print(f"vectors: {len(embeddings.symbols)} genes x {embeddings.dim}; setup {time.perf_counter() - start:.1f}s")
    if args.scale_sweep:
        scale_sweep(data, embeddings, settings, args.scales)
        return

    if not args.no_baseline:
        tasks = subset(data)
        print(f"\nscikit-learn's loop vs genebench on {len(tasks)} tasks (scale={args.scale}):")
        compare(tasks, embeddings, settings)

    for dim in sorted({embeddings.dim, 768}):
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            n, seconds, peak, lines = pool.submit(all_tasks, args.embeddings, dim, args.scale).result()
        limit = TARGETS.get(f"all {dim}-d")
        print(f"genebench, all {n} tasks at {dim}-d: {seconds:.1f}s"
              + (f" (target <= {limit:.0f}s: {verdict(seconds <= limit)})" if limit else "")
              + f"; peak RSS of that process {peak:.2f} GiB"
              + (f" (target <= {TARGETS['peak GiB 768-d']:.0f}: {verdict(peak <= TARGETS['peak GiB 768-d'])})"
                 if dim == 768 else ""))
        print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
