"""Bad input: one clear error per problem with the embeddings, a recorded reason per problem with a task."""

import numpy as np
import pytest

from genebench.embeddings import GeneEmbeddings
from genebench.errors import EmbeddingError
from genebench.probe.validation import check_dims, check_embeddings, check_labels


def _table(vectors, symbols=None):
    vectors = np.asarray(vectors, dtype=np.float32)
    return GeneEmbeddings(symbols if symbols is not None else [f"G{i}" for i in range(len(vectors))], vectors)


def test_nan_and_inf_are_rejected_with_the_genes_named():
    vectors = np.arange(12.0).reshape(4, 3)
    vectors[1, 0], vectors[3, 2] = np.nan, np.inf
    with pytest.raises(EmbeddingError, match=r"NaN or inf in 2 genes \(\['G1', 'G3'\]\); drop those rows"):
        check_embeddings(_table(vectors))


def test_duplicates_with_different_vectors_are_rejected():
    table = _table([[1, 2], [3, 4], [1, 5]], symbols=["A", "B", "A"])
    with pytest.raises(EmbeddingError, match=r"different vectors for 1 duplicated symbols \(\['A'\]\)"):
        check_embeddings(table)


def test_identical_duplicates_are_merged_and_constant_columns_dropped():
    table = _table([[1, 7, 2], [3, 7, 4], [1, 7, 2]], symbols=["A", "B", "A"])
    cleaned, report = check_embeddings(table)
    assert cleaned.symbols.tolist() == ["A", "B"]
    np.testing.assert_array_equal(cleaned.vectors, [[1, 2], [3, 4]])
    assert report == {"n_genes": 2, "duplicates_merged": 1, "constant_columns_dropped": [1]}


def test_all_constant_or_empty_tables_are_rejected():
    with pytest.raises(EmbeddingError, match="every one of the 2 columns constant"):
        check_embeddings(_table([[1, 2], [1, 2]]))
    with pytest.raises(EmbeddingError, match=r"at least one gene and one dimension, found shape \(0, 3\)"):
        check_embeddings(GeneEmbeddings(np.array([], dtype=object), np.zeros((0, 3))))


def test_mismatched_dimensions_for_mean_pairs():
    check_dims({"a": 4, "b": 8}, mode="concat")
    with pytest.raises(EmbeddingError, match=r"averaging needs one vector length, found \{'a': 4, 'b': 8\}"):
        check_dims({"a": 4, "b": 8}, mode="mean")


def test_check_labels_reasons():
    folds = np.array([0, 1, 0, 1, 0, 1])
    assert check_labels("binary", np.array([0, 1, 1, 0, 0, 1]), folds, min_covered=2) is None
    assert check_labels("binary", np.array([0, 1]), folds[:2], min_covered=5) == (
        "too few covered rows: 2 < min_covered=5")
    assert check_labels("binary", np.array([1, 0, 1, 0, 1, 0]), folds, min_covered=2).startswith(
        "single-class training fold: fold 0 trains on class [0] only")
    assert check_labels("categorical", np.array([0, 1, 0, 2, 1, 2]), np.arange(6) % 3, min_covered=2).startswith(
        "single-class test fold: fold 1")
    multi = np.array([[1, 0], [0, 0], [1, 0], [0, 0], [1, 0], [0, 0]])
    assert check_labels("multi-label", multi, folds, min_covered=2) == (
        "single-class training fold: in fold 0 no label has both classes")
    assert check_labels("regression", np.ones(6), folds, min_covered=2) is None
    assert check_labels("binary", np.array([0, 1, 0]), np.array([-1, -1, -1]), min_covered=2).startswith(
        "no held-out rows")
