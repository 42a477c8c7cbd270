"""Family-dominated tasks: the fold mean against the pooled out-of-fold AUC, on the bundled name control.

For every single-gene cv task of the bundled snapshot, under family folds, the stored name control's held-out
predictions are scored two ways: the fold mean (what genebench reports,
`genebench.controls.covered.score_values`) and the pooled AUC (every held-out prediction ranked together,
`genebench.metrics.roc_auc`). Beside them: the task's largest family share (`TaskMetadata.family_report`) and
its family folds' imbalance (`fold_imbalance`). The baseline, measured in the same run, is the same comparison
on the tasks no family dominates (largest share at most a third).

    python benchmarks/bench_family_share.py
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import numpy as np  # noqa: E402

from genebench.controls.covered import score_values  # noqa: E402
from genebench.data import open_data  # noqa: E402
from genebench.metrics import roc_auc  # noqa: E402
from genebench.tasks.families import DOMINANT_SHARE  # noqa: E402
from genebench.tasks.folds import fold_imbalance  # noqa: E402
from genebench.tasks.types import task_type  # noqa: E402


def pooled(task, values: np.ndarray) -> float:
    """The AUC of every held-out prediction ranked together."""
    values = np.asarray(values, dtype=np.float64).reshape(len(task.fold_ids), -1)
    rows = (task.fold_ids >= 0) & ~np.isnan(values).any(axis=1)
    scores = values[rows]
    if task_type(task.metadata.type).target == "binary":
        scores = scores[:, 0]
    return roc_auc(task.labels[rows], scores, task_type=task.metadata.type)


def main() -> None:
    data = open_data()
    rows = []
    for meta in data.tasks("family"):
        if not meta.family_report or meta.family_unscorable or meta.evaluation != "cv":
            continue
        task = data.load_task(meta.name, "family")
        name = data.control_predictions(meta.name, "family").get("name")
        if name is None:
            continue
        mean, pool = score_values(task, name), pooled(task, name)
        report = meta.family_report
        imbalance = fold_imbalance(task.fold_ids, meta.n_folds)
        rows.append((report["largest_family_share"], imbalance, mean, pool, meta.name))
    rows.sort(reverse=True)
    print(f"{'share':>6} {'imbal':>6} {'mean':>7} {'pooled':>7} {'gap':>7}  task")
    for share, imbalance, mean, pool, name in rows:
        if share > DOMINANT_SHARE or abs(pool - mean) > 0.02:
            print(f"{share:6.3f} {imbalance:6.2f} {mean:7.4f} {pool:7.4f} {pool - mean:+7.4f}  {name}")
    gaps = np.array([pool - mean for _, _, mean, pool, _ in rows])
    dominated = np.array([share > DOMINANT_SHARE for share, *_ in rows])
    base = np.abs(gaps[~dominated]).mean()
    print(f"\n{len(rows)} tasks scored by the name control under family folds; {dominated.sum()} dominated "
          f"(a family holds more than {DOMINANT_SHARE:.0%}).")
    print(f"baseline, mean |pooled - fold mean| on the {(~dominated).sum()} others: {base:.4f}")
    if dominated.any():
        mean_dominated = np.abs(gaps[dominated]).mean()
        print(f"dominated tasks: {mean_dominated:.4f} ({mean_dominated / base:.1f}x the baseline)")
    print(f"tasks where the two differ by more than 0.02: {(np.abs(gaps) > 0.02).sum()}, of which dominated: "
          f"{(dominated & (np.abs(gaps) > 0.02)).sum()}")
    imbalances = np.array([imbalance for _, imbalance, *_ in rows])
    print(f"correlation of |gap| with the fold imbalance: {np.corrcoef(np.abs(gaps), imbalances)[0, 1]:.2f}")


if __name__ == "__main__":
    main()
