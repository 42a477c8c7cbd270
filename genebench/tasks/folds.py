"""Seeded, label-balanced fold assignment: folds are data, computed once at build time.

The algorithm, exactly (so anyone can reproduce the folds without genebench):

1. Rows are put in canonical order: sorted by their entity key ("gene" or "gene\\tpartner").
2. The task's generator is ``numpy.random.default_rng(task_seed(seed, task_name))``, where
   `task_seed` is the first 8 bytes (big-endian) of ``sha256(f"{seed}:{task_name}")``.
3. Binary, categorical and gene-pair tasks (stratified k-fold): classes are visited in sorted order;
   each class's rows are permuted with the generator and dealt round-robin to folds 0..k-1, the
   dealing continuing where the previous class stopped. Every class is spread as evenly as possible.
4. Multi-label tasks (iterative stratification, Sechidis et al. 2011): rows are permuted once. While
   labelled rows remain unassigned, take the label with the fewest unassigned rows (lowest index on a
   tie); give each of its rows, in permuted order, to the fold that most lacks that label, then the fold
   that most lacks rows, then a generator draw among the tied folds. Rows without labels go last, to the
   fold that most lacks rows. Derived binary tasks inherit their parent's folds unchanged.
5. Cold-gene pair tasks (`TaskSpec.fold_scheme == "cold genes"`, e.g. "Gene2Gene (cold genes)"): the distinct
   genes of the task, sorted, are permuted with the generator and dealt round-robin into k groups. A pair is
   kept only when both its genes fall in one group, and its fold is that group; pairs across groups are left
   out. No gene of a held-out pair then appears in any training pair, so a probe cannot score a pair by what it
   learnt about either gene from other pairs (gene identity, interaction degree). With k groups about 1/k of the
   pairs are kept (Gene2Gene: 57,605 of 288,365 pairs with k = 5), and folds are not label-stratified.
6. Family folds (`family_fold`, single-gene cv tasks; a group-aware stratification like scikit-learn's
   `StratifiedGroupKFold`, multi-label too). Each row's gene has a family (`genebench.tasks.families`). Each
   family gets a count vector: its rows per class (binary, categorical; quintile of the target for regression)
   or per label (multi-label), plus its row count as a last column. Families are sorted by key, permuted with
   ``numpy.random.default_rng(task_seed(seed, "family:" + task_name))``, then stably sorted by row count,
   largest first. Each family in turn goes to the fold that minimises the mean, over columns with a non-zero
   total, of the standard deviation (ddof=0) over folds of each fold's share of that column's total, counting
   the family in that fold; ties (within 1e-12) go to the fold with fewer rows, then the lower index. All
   rows of a family share its fold. Derived binary tasks inherit their parent's family folds unchanged; pair
   and train-test tasks keep their split (`family_fold == fold`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import numpy as np

from genebench.tasks.metadata import TaskMetadata
from genebench.tasks.task import Task


def task_seed(seed: int, task_name: str) -> int:
    """A 64-bit seed for one task, independent of which other tasks are built."""
    digest = hashlib.sha256(f"{seed}:{task_name}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def canonical_order(keys: np.ndarray) -> np.ndarray:
    """Indices that sort rows by entity key: the order folds are assigned in."""
    return np.argsort(np.asarray(keys, dtype=str), kind="stable")


def stratified_folds(classes: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Deal each class's rows round-robin over folds, in a seeded order.

    Args:
        classes: shape (n_rows,), one class label per row, in canonical order.
        n_folds: number of folds k.
        rng: the task's generator.

    Returns:
        shape (n_rows,), fold index in [0, k).
    """
    classes = np.asarray(classes)
    folds = np.empty(len(classes), dtype=np.int8)
    position = 0
    for value in np.unique(classes):
        rows = np.flatnonzero(classes == value)
        rows = rows[rng.permutation(len(rows))]
        folds[rows] = (position + np.arange(len(rows))) % n_folds
        position += len(rows)
    return folds


def iterative_stratification(labels: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Label-balanced folds for multi-label data (Sechidis et al. 2011).

    Args:
        labels: shape (n_rows, n_labels), multi-hot, rows in canonical order.
        n_folds: number of folds k.
        rng: the task's generator.

    Returns:
        shape (n_rows,), fold index in [0, k).
    """
    labels = np.asarray(labels, dtype=bool)
    n_rows, _ = labels.shape
    order = rng.permutation(n_rows)
    folds = np.full(n_rows, -1, dtype=np.int8)
    wanted_rows = np.full(n_folds, n_rows / n_folds)
    wanted = np.tile(labels.sum(axis=0) / n_folds, (n_folds, 1))
    left = labels.sum(axis=0).astype(np.int64)
    labels_in_order = labels[order]
    while left.any():
        label = int(np.argmin(np.where(left > 0, left, np.iinfo(np.int64).max)))
        pick = labels_in_order[:, label] & (folds[order] < 0)
        for row in order[pick]:
            fold = _best_fold(wanted[:, label], wanted_rows, rng)
            folds[row] = fold
            wanted[fold] -= labels[row]
            wanted_rows[fold] -= 1
            left -= labels[row]
    for row in order[folds[order] < 0]:
        fold = _best_fold(wanted_rows, wanted_rows, rng)
        folds[row] = fold
        wanted_rows[fold] -= 1
    return folds


def _best_fold(first: np.ndarray, second: np.ndarray, rng: np.random.Generator) -> int:
    tied = np.flatnonzero(first == first.max())
    if len(tied) > 1:
        tied = tied[second[tied] == second[tied].max()]
    return int(tied[0] if len(tied) == 1 else rng.choice(tied))


def assign_folds(keys: np.ndarray, labels: np.ndarray, *, multilabel: bool, n_folds: int, seed: int,
                 task_name: str) -> np.ndarray:
    """Folds for one task's rows, in their given order (see the module docstring).

    Args:
        keys: shape (n_rows,), each row's entity key.
        labels: shape (n_rows,) of classes, or (n_rows, n_labels) multi-hot when `multilabel`.
        n_folds: number of folds k.
        seed: the build's seed.
        task_name: the task's name, which seeds its generator.

    Returns:
        shape (n_rows,), fold index per row in the given order.

    Examples:
        >>> assign_folds(np.array(["a", "b", "c", "d"]), np.array([0, 0, 1, 1]), multilabel=False,
        ...              n_folds=2, seed=0, task_name="t").tolist()
        [0, 1, 1, 0]
    """
    order = canonical_order(keys)
    rng = np.random.default_rng(task_seed(seed, task_name))
    ordered = np.asarray(labels)[order]
    in_order = iterative_stratification(ordered, n_folds, rng) if multilabel else stratified_folds(
        ordered, n_folds, rng)
    folds = np.empty_like(in_order)
    folds[order] = in_order
    return folds


def family_folds(keys: np.ndarray, families: np.ndarray, labels: np.ndarray, *, multilabel: bool, n_folds: int,
                 seed: int, task_name: str) -> np.ndarray:
    """Family-held-out folds for one task's rows, in their given order (step 6 of the module docstring).

    Args:
        keys: shape (n_rows,), each row's entity key.
        families: shape (n_rows,), each row's family key (`genebench.tasks.families.families_of`).
        labels: shape (n_rows,) of classes, or (n_rows, n_labels) multi-hot when `multilabel`.
        n_folds: number of folds k.
        seed: the build's seed.
        task_name: the task's name, which seeds its generator.

    Returns:
        shape (n_rows,), int8 fold index per row in the given order; rows of one family share a fold.

    Examples:
        >>> family_folds(np.array(list("abcd")), np.array(["x", "x", "y", "z"]), np.array([0, 1, 0, 1]),
        ...              multilabel=False, n_folds=2, seed=0, task_name="t").tolist()
        [0, 0, 1, 1]
    """
    order = canonical_order(keys)
    labels, families = np.asarray(labels)[order], np.asarray(families, dtype=str)[order]
    if multilabel:
        counts = np.asarray(labels, dtype=np.float64)
    else:
        _, codes = np.unique(labels, return_inverse=True)
        counts = np.eye(int(codes.max()) + 1 if len(codes) else 0)[codes]
    counts = np.hstack([counts, np.ones((len(counts), 1))])
    names, of_row = np.unique(families, return_inverse=True)
    per_family = np.zeros((len(names), counts.shape[1]))
    np.add.at(per_family, of_row, counts)
    rng = np.random.default_rng(task_seed(seed, f"family:{task_name}"))
    visit = rng.permutation(len(names))
    visit = visit[np.argsort(-per_family[visit, -1], kind="stable")]
    total = per_family.sum(axis=0)
    used = total > 0
    share = per_family[:, used] / total[used]
    fold_share = np.zeros((n_folds, share.shape[1]))
    fold_of = np.empty(len(names), dtype=np.int8)
    for family in visit:
        added = fold_share + share[family]
        s1, s2 = fold_share.sum(axis=0), (fold_share ** 2).sum(axis=0)
        s1_new = s1 + share[family]
        s2_new = s2 - fold_share ** 2 + added ** 2
        cost = np.sqrt(np.maximum(s2_new / n_folds - (s1_new / n_folds) ** 2, 0)).mean(axis=1)
        best = np.flatnonzero(np.isclose(cost, cost.min(), rtol=0, atol=1e-12))
        fold = int(best[np.argmin(fold_share[best, -1])])  # argmin: the first of equal minima
        fold_of[family] = fold
        fold_share[fold] += share[family]
    folds = np.empty(len(order), dtype=np.int8)
    folds[order] = fold_of[of_row]
    return folds


def cold_gene_folds(first: np.ndarray, second: np.ndarray, *, n_folds: int, seed: int, task_name: str) -> np.ndarray:
    """Folds of a pair task under the cold-gene scheme (step 5 of the module docstring).

    Args:
        first: shape (n_rows,), each pair's first gene.
        second: shape (n_rows,), each pair's second gene.
        n_folds: number of folds k, which is also the number of gene groups.
        seed: the build's seed.
        task_name: the task's name, which seeds its generator.

    Returns:
        shape (n_rows,), the fold of each pair, or -1 where its genes fall in different groups (left out).

    Examples:
        >>> cold_gene_folds(np.array(["a", "a", "b"]), np.array(["b", "c", "c"]), n_folds=2, seed=0,
        ...                 task_name="t").tolist()
        [-1, 0, -1]
    """
    first, second = np.asarray(first, dtype=str), np.asarray(second, dtype=str)
    genes = np.unique(np.concatenate([first, second]))
    rng = np.random.default_rng(task_seed(seed, task_name))
    group = np.empty(len(genes), dtype=np.int8)
    group[rng.permutation(len(genes))] = np.arange(len(genes)) % n_folds
    a, b = group[np.searchsorted(genes, first)], group[np.searchsorted(genes, second)]
    return np.where(a == b, a, -1).astype(np.int8)


def family_fold_problem(task: Task, paper_folds: np.ndarray, families: Mapping[str, str] | None) -> str | None:
    """Why a task's stored family folds are not the ones step 6 gives, or None: checked at data open
    (`genebench.data.BenchmarkData`), so damaged family folds are never scored.

    A task with family folds (single-gene cv, `has_family_folds`) needs every row in a fold 0..k-1, no family of
    `families` (the HGNC table the data was built with, `genebench.tasks.families.gene_families`; None skips this)
    in two folds, and its `family_unscorable` mark set exactly when the folds leave it unscorable (a fold empty, or
    the probe's `check_labels` refusing them). Any other task keeps its split: family folds equal `paper_folds`.

    Examples:
        >>> from genebench.tasks.metadata import TaskMetadata
        >>> meta = TaskMetadata(name="t", category="localization", type="binary", family="f", source_url="u",
        ...                     source_version="1", license="l", citation="c", n_folds=2)
        >>> genes = np.array(["A1", "A2", "B1", "B2"])
        >>> family_fold_problem(Task(meta, genes, np.array([0, 1, 0, 1]), np.array([0, 1, 1, 0])), np.zeros(4),
        ...                     {"A1": "group:1", "A2": "group:1", "B1": "stem:B", "B2": "stem:B"})
        "family 'group:1' is in folds 0 and 1 (2 families cross a fold)"
    """
    from genebench.tasks.families import families_of

    meta, folds = task.metadata, np.asarray(task.fold_ids)
    if not meta.has_family_folds:
        if not np.array_equal(folds, np.asarray(paper_folds)):
            return "its family folds differ from its paper split (a pair or train-test task keeps its split)"
        return None
    if (outside := ~np.isin(folds, np.arange(meta.n_folds))).any():
        return (f"{int(outside.sum())} rows have a family fold outside 0..{meta.n_folds - 1} "
                f"(e.g. {folds[outside][0].item()!r})")
    if families is not None and not meta.is_derived:  # a derived task's folds are its parent's, checked there
        names, of_row = np.unique(families_of(task.entities, families).astype(str), return_inverse=True)
        low, high = np.full(len(names), meta.n_folds), np.full(len(names), -1)
        np.minimum.at(low, of_row, folds)
        np.maximum.at(high, of_row, folds)
        if (cross := np.flatnonzero(low != high)).size:
            first = cross[0]
            return (f"family {str(names[first])!r} is in folds {low[first]} and {high[first]} ({cross.size} families "
                    "cross a fold)")
    reason = family_unscorable(meta.type, task.labels, folds, meta.n_folds)
    if (reason is None) != (meta.family_unscorable is None):
        return (f"it is marked family_unscorable {meta.family_unscorable!r}, but its family folds give "
                f"{reason!r}" if reason is None else f"its family folds leave it unscorable ({reason}), but it is "
                "not marked family_unscorable")
    return None


def family_unscorable(type_name: str, labels: np.ndarray, folds: np.ndarray, n_folds: int) -> str | None:
    """Why a task's family folds leave it unscorable, or None: a fold is empty, or the probe's `check_labels`
    refuses the folds. The one rule behind a task's `family_unscorable` mark, set at build and checked at open.

    Examples:
        >>> family_unscorable("binary", np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1]), 3)
        'fold 2 is empty'
    """
    from genebench.probe.validation import check_labels

    empty = [k for k in range(n_folds) if not (np.asarray(folds) == k).any()]
    return f"fold {empty[0]} is empty" if empty else check_labels(type_name, labels, folds, min_covered=1)


def fold_imbalance(folds: np.ndarray, n_folds: int) -> float:
    """The largest fold's rows over the mean fold's (1.0: even folds; train-only rows, fold -1, left out).

    Examples:
        >>> fold_imbalance(np.array([0, 0, 0, 1, 1, 2, -1]), 3)
        1.5
    """
    folds = np.asarray(folds)
    sizes = np.bincount(folds[folds >= 0], minlength=n_folds)
    return float(sizes.max() / (sizes.sum() / n_folds)) if sizes.sum() else float("nan")


POOLED_AUC = "pooled_roc_auc"
"""The result diagnostic (`TaskResult.diagnostics`) of `pooled_diagnostic`, shown beside the fold mean."""


def pooled_diagnostic(meta: TaskMetadata, labels: np.ndarray, held_out: np.ndarray) -> dict[str, float]:
    """`{POOLED_AUC: ROC AUC of every held-out prediction ranked together}` for a cv classification task (else
    empty): a diagnostic beside the fold mean, which stays the score. The two part where folds differ, as a
    family-dominated task's family folds do (one fold holds the dominant family whole).

    Examples:
        >>> meta = TaskMetadata(name="t", category="localization", type="binary", family="f", source_url="",
        ...                     source_version="", license="", citation="")
        >>> pooled_diagnostic(meta, np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
        {'pooled_roc_auc': 0.75}
    """
    from genebench.metrics import roc_auc
    from genebench.tasks.types import task_type

    if meta.evaluation != "cv" or not task_type(meta.type).is_classification:
        return {}
    return {POOLED_AUC: round(roc_auc(labels, held_out, task_type=meta.type), 6)}
