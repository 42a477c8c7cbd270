"""Gene families and family folds, on the real HGNC release."""

import numpy as np
import pytest

from genebench.data import open_data
from genebench.symbols import read_hgnc
from genebench.tasks.families import DOMINANT_SHARE, families_of, gene_families, symbol_stem
from genebench.tasks.folds import family_folds, fold_imbalance


@pytest.fixture(scope="module")
def real_families(shared_data):
    return gene_families(read_hgnc(shared_data / "hgnc" / "hgnc_complete_set.txt.gz"))


def test_symbol_stem_drops_trailing_digits_only():
    assert [symbol_stem(s) for s in ("ZNF717", "OR2A4", "HLA-DRB1", "C1orf112", "7SK")] == [
        "ZNF", "OR2A", "HLA-DRB", "C1orf", "7SK"]


def test_family_is_the_smallest_hgnc_group_else_the_stem(hgnc_file):
    hgnc = read_hgnc(hgnc_file)
    families = gene_families(hgnc)
    groups = {s: g.split("|") for s, g in zip(hgnc["symbol"], hgnc["gene_group_id"]) if g}
    size = {}
    for gs in groups.values():
        for g in gs:
            size[g] = size.get(g, 0) + 1
    for symbol, gs in groups.items():
        assert families[symbol] == "group:" + min(gs, key=lambda g: (size[g], int(g)))
    ungrouped = [s for s in hgnc["symbol"] if s not in groups]
    assert ungrouped and all(families[s] == "stem:" + symbol_stem(s) for s in ungrouped)


@pytest.mark.shared_data
def test_real_release_keeps_paralogs_together_without_a_giant_family(real_families):
    assert real_families["HLA-A"] == real_families["HLA-B"]  # class I genes share their most specific group
    assert real_families["OR2A4"] == real_families["OR2A7"]
    sizes = np.unique(list(real_families.values()), return_counts=True)[1]
    assert sizes.max() / len(real_families) < 0.06  # no family near the 43% of connected groups (lincRNAs, 5.3%)
    assert families_of(["NOT-A-GENE12"], real_families).tolist() == ["stem:NOT-A-GENE"]


def test_family_folds_keep_families_whole_and_stratify():
    rng = np.random.default_rng(0)
    keys = np.array([f"G{i:04d}" for i in range(600)])
    families = np.array([f"F{i // 3}" for i in range(600)])  # 200 families of 3
    labels = np.repeat(rng.random(200) < 0.3, 3).astype(int)
    folds = family_folds(keys, families, labels, multilabel=False, n_folds=5, seed=0, task_name="t")
    for family in np.unique(families):
        assert len(set(folds[families == family])) == 1
    positives = np.bincount(folds[labels == 1], minlength=5)
    assert positives.max() - positives.min() <= 3 and np.ptp(np.bincount(folds)) <= 3
    order = rng.permutation(600)
    shuffled = family_folds(keys[order], families[order], labels[order], multilabel=False, n_folds=5, seed=0,
                            task_name="t")
    assert np.array_equal(folds[order], shuffled)  # independent of row order
    other = family_folds(keys, families, labels, multilabel=False, n_folds=5, seed=1, task_name="t")
    assert not np.array_equal(folds, other)


def test_family_folds_stratify_each_label_of_a_multilabel_task():
    rng = np.random.default_rng(1)
    families = np.array([f"F{i // 2}" for i in range(1000)])
    labels = np.repeat(rng.random((500, 6)) < np.linspace(0.05, 0.4, 6), 2, axis=0)
    folds = family_folds(families, families, labels, multilabel=True, n_folds=5, seed=0, task_name="m")
    per_fold = np.stack([labels[folds == k].sum(axis=0) for k in range(5)])
    assert (per_fold > 0).all()
    assert (per_fold.max(axis=0) - per_fold.min(axis=0) <= 0.2 * per_fold.mean(axis=0) + 4).all()


def test_a_task_one_family_dominates_is_marked_with_its_uneven_family_folds():
    data = open_data()
    dosage = data.load_task("dosage sensitive vs insensitive TF", "family")
    families = families_of(dosage.entities, gene_families(data.hgnc()))
    keys, sizes = np.unique(families.astype(str), return_counts=True)
    assert keys[sizes.argmax()] == "group:28" and round(sizes.max() / len(families), 3) == 0.511  # zinc fingers
    assert round(fold_imbalance(dosage.fold_ids, 5), 2) == 2.65  # one fold holds the zinc fingers whole
    assert round(fold_imbalance(data.load_task("dosage sensitive vs insensitive TF").fold_ids, 5), 2) == 1.01  # paper
    marked = {meta.name: meta.dominant_family for meta in data.tasks() if meta.dominant_family}
    assert sorted(marked) == ["HLA class I vs class II", "dosage sensitive vs insensitive TF"]
    assert marked["dosage sensitive vs insensitive TF"].startswith("group:28 holds 51% of the genes")
    assert marked["HLA class I vs class II"].startswith("group:588 holds 52% of the genes")
    report = data.metadata("dosage sensitive vs insensitive TF").family_report
    imbalanced = data.metadata("TF vs non-TF").model_copy(update={"family_report": {**report, "fold_imbalance": 2.65}})
    assert imbalanced.dominant_family == "group:28 holds 51% of the genes; family folds 2.65x uneven"
    assert DOMINANT_SHARE == 1 / 3
