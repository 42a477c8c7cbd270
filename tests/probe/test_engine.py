"""The engine end to end on synthetic tasks with a known signal, one per task type."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from genebench.embeddings import GeneEmbeddings
from genebench.genes import restrict
from genebench.probe import ProbeSettings, evaluate_task, evaluate_tasks

CPU = ProbeSettings(device="cpu")


def test_every_task_type_is_scored(world):
    multi = world.multilabel()
    tasks = [world.binary(), world.categorical(), multi, world.derived(multi, 1), world.pairs(), world.regression()]
    results = {r.task.name: r for r in evaluate_tasks(tasks, world.embeddings, CPU)}
    assert list(results) == ["bin", "cat", "multi", "multi;L1", "pairs", "reg"]
    for name in ["bin", "cat", "multi", "multi;L1", "pairs"]:
        result = results[name]
        assert result.skipped is None
        assert result.main_score == "roc_auc"
        assert result.scores["roc_auc"].mean > 0.85, name
        assert len(result.scores["roc_auc"].folds) == 5
        assert set(result.scores) == {"roc_auc", "f1_weighted", "precision_weighted", "recall_weighted", "accuracy"}
    assert results["reg"].main_score == "r2"
    assert results["reg"].scores["r2"].mean > 0.9
    assert results["cat"].diagnostics["solver"] == "lbfgs, multinomial"
    assert results["bin"].coverage.fraction == 1.0


def test_binary_auc_matches_sklearn_per_fold(world):
    task = world.binary()
    result = evaluate_task(task, world.embeddings, CPU)
    X = world.embeddings.vectors[:300]
    for k, (train, test) in enumerate(task.splits()):
        model = LogisticRegression(max_iter=5000).fit(X[train], task.labels[train])  # the paper's probe
        expected = roc_auc_score(task.labels[test], model.predict_proba(X[test])[:, 1])
        assert abs(result.scores["roc_auc"].folds[k] - expected) < 0.005


def test_derived_task_reuses_its_parent_fit(world):
    multi = world.multilabel()
    derived = world.derived(multi, 2)
    together = evaluate_tasks([multi, derived], world.embeddings, CPU)[1]
    alone = evaluate_task(derived, world.embeddings, CPU)
    assert together.diagnostics["solver"] == "reused the fit of parent 'multi'"
    assert alone.diagnostics["solver"] == "lbfgs, one probe per column"
    np.testing.assert_allclose(together.scores["roc_auc"].folds, alone.scores["roc_auc"].folds, atol=2e-3)


def test_scores_repeat_bit_for_bit(world):
    multi = world.multilabel()
    tasks = [world.binary(), world.categorical(), multi, world.derived(multi, 0), world.pairs()]
    first = [r.scores for r in evaluate_tasks(tasks, world.embeddings, CPU)]
    second = [r.scores for r in evaluate_tasks(tasks, world.embeddings, CPU)]
    assert first == second


def _symbols_file(folder, name: str, symbols) -> str:
    path = folder / name
    path.write_text("\n".join(map(str, symbols)) + "\n")
    return str(path)


def _kept_rows(embeddings: GeneEmbeddings, kept: list[str]) -> GeneEmbeddings:
    """The table's rows for the genes `restrict` kept: what encoding those genes gives a precomputed model."""
    rows = np.isin(embeddings.symbols, kept)
    return GeneEmbeddings(embeddings.symbols[rows], embeddings.vectors[rows])


def test_missing_genes_are_never_filled(world, tmp_path):
    task = world.binary()
    kept = restrict(world.genes.tolist(), exclude_genes=_symbols_file(tmp_path, "out.txt", world.genes[:60]))
    assert kept == world.genes[60:].tolist()
    result = evaluate_task(task, _kept_rows(world.embeddings, kept), CPU)
    assert result.coverage.n_covered == 240
    assert result.coverage.n_task == 300
    assert result.coverage.fraction == pytest.approx(0.8)
    assert result.coverage.missing_genes == sorted(world.genes[:60].tolist())
    assert result.skipped is None
    full = evaluate_task(task, world.embeddings, CPU)
    assert result.scores["roc_auc"].folds != full.scores["roc_auc"].folds


def test_restrict_genes_to_a_common_set(world, tmp_path):
    other = tmp_path / "other.parquet"
    GeneEmbeddings(world.genes[100:], world.embeddings.vectors[100:]).save(other)
    kept = restrict(world.genes.tolist(), include_genes=_symbols_file(tmp_path, "in.txt", world.genes[:250]),
                    common_with=[str(other)])
    assert kept == world.genes[100:250].tolist()


def test_too_few_covered_genes_is_a_recorded_skip(world, tmp_path):
    task = world.binary()
    kept = restrict(world.genes.tolist(), include_genes=_symbols_file(tmp_path, "in.txt", world.genes[:8]))
    result = evaluate_task(task, _kept_rows(world.embeddings, kept), CPU)
    assert result.skipped == "too few covered rows: 8 < min_covered=10"
    assert result.scores == {}
    assert result.coverage.n_covered == 8


def test_single_class_is_a_recorded_skip(world, tmp_path):
    task = world.binary()
    positives = world.genes[:300][task.labels == 1]
    kept = restrict(world.genes.tolist(), include_genes=_symbols_file(tmp_path, "in.txt", positives))
    result = evaluate_task(task, _kept_rows(world.embeddings, kept), CPU)
    assert result.skipped.startswith("single-class training fold: fold 0 trains on class [1] only")


def test_pair_modes(world):
    pairs = world.pairs()
    mean = evaluate_task(pairs, world.embeddings, CPU)
    concat = evaluate_task(pairs, world.embeddings, ProbeSettings(device="cpu", pair_mode="concat"))
    assert mean.scores["roc_auc"].mean > 0.9
    assert concat.scores["roc_auc"].mean > 0.85
    assert mean.scores["roc_auc"].folds != concat.scores["roc_auc"].folds


def test_ordered_train_test_pairs_score_per_readout_gene(world):
    pairs = world.pairs(n=800, evaluation="train-test")
    folds = np.where(np.arange(800) < 600, -1, 0)
    task = type(pairs)(metadata=pairs.metadata, entities=pairs.entities, labels=pairs.labels, fold_ids=folds)
    result = evaluate_task(task, world.embeddings, CPU)
    assert result.main_score == "auc_per_gene"
    assert len(result.scores["auc_per_gene"].folds) == 1
    assert result.scores["roc_auc"].std == 0.0
    assert 0.5 < result.scores["auc_per_gene"].mean <= 1.0


def test_non_gene_partners_need_partner_embeddings(world):
    pairs = world.pairs(entity_types=("gene", "disease"))
    result = evaluate_task(pairs, world.embeddings, CPU)
    assert result.skipped.startswith("task 'pairs': expected embeddings for its 'disease' entities, found none")
    diseases = GeneEmbeddings(world.genes, world.embeddings.vectors[:, :10])
    with_partner = evaluate_task(pairs, world.embeddings, ProbeSettings(device="cpu", pair_mode="concat"),
                                 partner_embeddings=diseases)
    assert with_partner.skipped is None
    mismatched = evaluate_task(pairs, world.embeddings, CPU, partner_embeddings=diseases)
    assert "averaging needs one vector length" in mismatched.skipped
