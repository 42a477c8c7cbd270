import numpy as np
from sklearn.metrics import roc_auc_score

from genebench.data import open_data
from genebench.embeddings import GeneEmbeddings
from genebench.model_info import ModelInfo
from genebench.pipeline import to_result
from genebench.probe.engine import ProbeEngine
from genebench.probe.settings import ProbeSettings
from genebench.results import results_frame
from genebench.tasks.folds import (
    POOLED_AUC,
    assign_folds,
    cold_gene_folds,
    iterative_stratification,
    task_seed,
)


def _keys(n):
    return np.array([f"G{i:05d}" for i in range(n)])


def test_stratified_folds_balance_every_class():
    labels = np.array([0] * 50 + [1] * 23 + [2] * 7)
    folds = assign_folds(_keys(80), labels, multilabel=False, n_folds=5, seed=0, task_name="t")
    for value, n in ((0, 50), (1, 23), (2, 7)):
        counts = np.bincount(folds[labels == value], minlength=5)
        assert counts.max() - counts.min() <= 1 and counts.sum() == n
    assert np.bincount(folds).tolist() == [16, 16, 16, 16, 16]


def test_folds_are_seeded_and_independent_of_row_order():
    labels = np.array([0, 1] * 40)
    keys = _keys(80)
    first = assign_folds(keys, labels, multilabel=False, n_folds=5, seed=0, task_name="t")
    again = assign_folds(keys, labels, multilabel=False, n_folds=5, seed=0, task_name="t")
    order = np.random.default_rng(1).permutation(80)
    shuffled = assign_folds(keys[order], labels[order], multilabel=False, n_folds=5, seed=0, task_name="t")
    assert np.array_equal(first, again)
    assert np.array_equal(first[order], shuffled)
    other = assign_folds(keys, labels, multilabel=False, n_folds=5, seed=1, task_name="t")
    assert not np.array_equal(first, other)


def test_task_seed_is_a_stable_documented_hash():
    assert task_seed(0, "TF vs non-TF") == task_seed(0, "TF vs non-TF")
    assert task_seed(0, "a") == int.from_bytes(__import__("hashlib").sha256(b"0:a").digest()[:8], "big")


def test_iterative_stratification_spreads_rare_labels():
    rng = np.random.default_rng(0)
    labels = rng.random((500, 12)) < np.linspace(0.02, 0.4, 12)
    folds = iterative_stratification(labels, 5, np.random.default_rng(3))
    assert set(folds) == {0, 1, 2, 3, 4}
    per_fold = np.stack([labels[folds == k].sum(axis=0) for k in range(5)])
    rare = labels.sum(axis=0)[0]
    assert per_fold[:, 0].max() - per_fold[:, 0].min() <= 1, (rare, per_fold[:, 0])
    assert (per_fold > 0).all()


def test_cold_gene_folds_keep_test_genes_out_of_training():
    rng = np.random.default_rng(3)
    genes = np.array([f"G{i:03d}" for i in range(200)])
    pairs = genes[rng.integers(0, 200, size=(5000, 2))]
    folds = cold_gene_folds(pairs[:, 0], pairs[:, 1], n_folds=5, seed=0, task_name="pairs")
    kept = folds >= 0
    assert 0.15 < kept.mean() < 0.25  # about 1/k of the pairs share a group
    for fold in range(5):
        test, train = pairs[folds == fold], pairs[kept & (folds != fold)]
        assert len(test) and not set(test.ravel()) & set(train.ravel())
    order = rng.permutation(len(pairs))
    again = cold_gene_folds(pairs[order, 0], pairs[order, 1], n_folds=5, seed=0, task_name="pairs")
    assert np.array_equal(again, folds[order])  # a gene's group depends on the gene set, not the row order


def test_each_result_sets_the_pooled_auc_beside_the_fold_mean():
    """A probe on the zinc-finger-dominated task under family folds: the pooled AUC of its held-out scores is set
    beside the fold mean, in the result and in the results table."""
    data = open_data()
    task = data.load_task("dosage sensitive vs insensitive TF", "family")
    genes = np.unique(task.entities)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(genes), 16)).astype(np.float32)
    vectors[:, 0] += (np.isin(genes, task.entities[task.labels == 1])).astype(np.float32)  # a weak signal
    engine = ProbeEngine(GeneEmbeddings(symbols=genes, vectors=vectors), ProbeSettings(scheme="family"))
    scores, held_out, _ = engine.score(task)
    pooled = scores.diagnostics[POOLED_AUC]
    assert pooled == round(roc_auc_score(task.labels[scores.rows], held_out), 6)
    assert abs(pooled - scores.scores["roc_auc"].mean) > 0.01  # the uneven folds part the two
    result = to_result(scores, model=ModelInfo(id="org/model", input="random"), probe={}, provenance={},
                       config={})
    row = results_frame([result]).set_index("metric").loc["roc_auc"]
    assert row["pooled"] == pooled and row["mean"] == scores.scores["roc_auc"].mean
    assert row["dominant_family"].startswith("group:28 holds 51% of the genes")
