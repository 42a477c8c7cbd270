"""The paper's bag of words, as the reference builds it, beside genebench's own."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer

from genebench.inputs import ADAPTERS, get_adapter
from model_adapters.reproduction import PaperBagOfWordsAdapter


def test_paper_bag_of_words_is_the_references_recipe(hgnc, fixtures):
    refseq = fixtures / "refseq_summaries" / "refseq_gene_summary_9606.tsv"
    # the reference's corpus, made here from the raw files: every HGNC gene with a summary, its full text
    raw = pd.read_csv(refseq, sep="\t", dtype=str, keep_default_na=False)
    names = dict(zip(hgnc["symbol"], hgnc["name"]))
    summaries = {s: text for s, text in zip(raw["hgnc_symbol_2024"], raw["summary"]) if text and s in names}
    texts = {s: f"Gene symbol {s} full name {names[s]} with the summary {summaries[s]}" for s in summaries}
    reference = CountVectorizer(max_features=64).fit(list(texts.values()))

    adapter = get_adapter("paper-bag-of-words", hgnc=hgnc, source="refseq", descriptions=refseq, max_features=64)
    assert isinstance(adapter, PaperBagOfWordsAdapter)
    described = [s for s in ("TP53", "EGFR") if s in texts]
    result = adapter.encode(["TP53", "EGFR", "A4GALT", "NOTAGENE"])
    assert list(result.symbols) == described and len(described) == 2
    np.testing.assert_array_equal(result.vectors, reference.transform([texts[s] for s in described]).toarray())
    assert adapter._vectorizer.vocabulary_ == reference.vocabulary_
    assert "the" in reference.vocabulary_ and "with" in reference.vocabulary_  # no stop-word rule
    assert result.missing == {"unknown_symbol": ["NOTAGENE"], "no_description": ["A4GALT"]}  # no summary: dropped
    meta = adapter.meta
    assert meta.input == "paper-bag-of-words" and meta.settings["purpose"] == "to reproduce the paper"
    assert ADAPTERS["paper-bag-of-words"].default_name == "genebench/paper-bag-of-words"
    ours = get_adapter("bag-of-words", hgnc=hgnc, source="refseq", descriptions=refseq, max_features=64)
    assert "the" not in ours._vectorizer.vocabulary_ and ours.meta.cache_key != meta.keyed().cache_key
