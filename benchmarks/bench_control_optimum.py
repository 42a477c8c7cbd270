"""Whether the stored name control sits at scikit-learn's optimum (issue 32, target: within 0.002 on every task).

For each binary task up to `--max-genes` genes, under each fold scheme, the name control's features are refitted
with scikit-learn (`LogisticRegression(C=1)`, lbfgs at tol 1e-9, the baseline, measured in this run) on the stored
folds, and its mean held-out ROC AUC is compared with the score the data stores for the control. Printed per task:
both scores, their difference and ratio, and the seconds scikit-learn took; then the largest difference and how
many tasks are within 0.002.

    PYTHONPATH=$PWD python benchmarks/bench_control_optimum.py [--data DIR] [--max-genes 2000]
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import argparse  # noqa: E402
import logging  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from genebench.constants import SNAPSHOT_DIR  # noqa: E402
from genebench.controls.features import NAME_SENTENCE_MODEL, NameFeatures  # noqa: E402
from genebench.data import BenchmarkData  # noqa: E402
from genebench.inputs import get_adapter  # noqa: E402
from genebench.tasks.types import task_type  # noqa: E402

TARGET = 0.002


def sklearn_optimum(vectors: np.ndarray, labels: np.ndarray, folds: np.ndarray) -> float:
    """Mean held-out ROC AUC of scikit-learn's fit at tol 1e-9 over the stored folds."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    aucs = []
    for k in np.unique(folds[folds >= 0]):
        train, test = folds != k, folds == k
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lbfgs at tol 1e-9 may say it stopped at max_iter
            fit = LogisticRegression(C=1.0, tol=1e-9, max_iter=100_000).fit(vectors[train], labels[train])
        aucs.append(roc_auc_score(labels[test], fit.predict_proba(vectors[test])[:, 1]))
    return float(np.mean(aucs))


def main() -> None:
    """Refit the name control on each small binary task and compare it with the stored score."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SNAPSHOT_DIR, help="data folder (default: the bundled snapshot)")
    parser.add_argument("--max-genes", type=int, default=2000, help="largest task to refit")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    data = BenchmarkData(args.data)
    hgnc = data.hgnc()
    sentences = get_adapter("description", NAME_SENTENCE_MODEL, hgnc=hgnc, source="hgnc", runtime="numpy",
                            dtype="float32")
    names = NameFeatures(hgnc, sentences)
    gaps = []
    for scheme in ("paper", "family"):
        for meta in data.tasks(scheme):
            info = task_type(meta.type)
            if (info.target != "binary" or info.unordered_pairs or meta.n_entities > args.max_genes or
                    "name" not in meta.controls):
                continue
            task = data.load_task(meta.name, scheme)
            if np.asarray(task.entities).ndim != 1:
                continue  # rows of gene pairs
            read = names.encode(list(task.entities))
            if list(read.symbols) != list(task.entities):
                continue  # a gene without name features: the stored control scored fewer rows
            start = time.perf_counter()
            optimum = sklearn_optimum(read.vectors, task.labels.reshape(len(task.entities)), task.fold_ids)
            gap = meta.controls["name"] - optimum
            gaps.append(abs(gap))
            print(f"{scheme:6s} {meta.name[:48]:48s} n={meta.n_entities:5d} stored {meta.controls['name']:.4f} "
                  f"scikit-learn {optimum:.4f} difference {gap:+.4f}, ratio {meta.controls['name'] / optimum:.4f} "
                  f"({time.perf_counter() - start:.1f} s)",
                  flush=True)
    within = sum(g <= TARGET for g in gaps)
    print(f"{len(gaps)} task-schemes: largest |difference| {max(gaps):.4f}; within {TARGET}: {within} "
          f"({within / len(gaps):.0%})")


if __name__ == "__main__":
    main()
