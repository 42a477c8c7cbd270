"""Baselines: seeded random vectors and bag-of-words over descriptions."""

from __future__ import annotations

import numpy as np

from model_adapters.baselines import BagOfWordsAdapter, RandomAdapter


def test_random_vectors_depend_on_gene_and_seed_only(hgnc):
    one = RandomAdapter(hgnc=hgnc, dim=8, seed=1).encode(["TP53", "EGFR", "NOTAGENE"])
    other_set = RandomAdapter(hgnc=hgnc, dim=8, seed=1).encode(["EGFR", "HLA-A", "TP53"])
    np.testing.assert_array_equal(one.vectors[0], other_set.vectors[2])
    assert one.missing == {"unknown_symbol": ["NOTAGENE"]}
    other_seed = RandomAdapter(hgnc=hgnc, dim=8, seed=2).encode(["TP53"])
    assert not np.allclose(one.vectors[0], other_seed.vectors[0])


def test_bag_of_words_counts_description_words(hgnc, fixtures):
    refseq = fixtures / "refseq_summaries" / "refseq_gene_summary_9606.tsv"
    adapter = BagOfWordsAdapter(hgnc=hgnc, source="refseq", descriptions=refseq, max_features=64)
    result = adapter.encode(["TP53", "EGFR", "A4GALT"])
    vocabulary = adapter._vectorizer.vocabulary_
    assert result.vectors.shape == (3, 64)
    text = adapter.source.describe(["TP53"]).texts["TP53"].lower()
    assert result.vectors[0, vocabulary["protein"]] == text.split().count("protein") >= 2
    assert result.vectors[2].sum() > 0  # name-only text still has words
    assert adapter.source.coverage(["TP53", "EGFR", "A4GALT"]) == {"full": 2, "name_only": 1, "missing": 0}
    again = BagOfWordsAdapter(hgnc=hgnc, source="refseq", descriptions=refseq, max_features=64).encode(["TP53"])
    np.testing.assert_array_equal(again.vectors[0], result.vectors[0])  # vocabulary independent of the gene set
