"""The paper's bag of words, exactly as the reference builds it: to reproduce the paper, not to measure a model.

The reference (`scripts/encodings_retrieval/extract_bag_of_words_encodings.py` of BiomedSciAI/gene-benchmark) fits
`CountVectorizer(max_features=1024)`, with no stop-word and no min-df rule, over "Gene symbol {symbol} full name
{name} with the summary {summary}" of every gene that has a summary, and drops the genes without one. genebench's
own bag of words (`model_adapters.baselines.BagOfWordsAdapter`) drops English stop words, keeps words found in at
least 2 descriptions and encodes genes without a summary from their name; use that one to measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from genebench.embeddings import GeneEmbeddings
from genebench.model_info import ModelInfo
from model_adapters.base import NO_DESCRIPTION, UNKNOWN_SYMBOL, make_embeddings, split_known
from model_adapters.baselines import BagOfWordsAdapter


class PaperBagOfWordsAdapter(BagOfWordsAdapter):
    """The reference's bag of words (see the module docstring): word counts over the `max_features` most frequent
    words of the full descriptions (symbol, name and summary) of every HGNC gene that has a summary; genes without
    one get no vector and are reported missing (`no_description`).

    Args: as `BagOfWordsAdapter`; `model` defaults to "paper-bag-of-words".
    """

    def __init__(self, model: str = "paper-bag-of-words", **settings) -> None:
        super().__init__(model, **settings)

    @cached_property
    def meta(self) -> ModelInfo:
        """Source version, vocabulary size and the reference's vectorizer, recorded as settings."""
        return ModelInfo(id=self.model, revision="sklearn-countvectorizer-reference", input="paper-bag-of-words",
                         pooling="counts", source_version=self.source.version,
                         settings={"source": self.source.source, "max_features": self.max_features,
                                   "vectorizer": f"CountVectorizer(max_features={self.max_features})",
                                   "corpus": "genes with a summary", "purpose": "to reproduce the paper"})

    @cached_property
    def _vectorizer(self):
        from sklearn.feature_extraction.text import CountVectorizer

        described = self.source.describe(list(self.hgnc["symbol"]))
        corpus = [described.texts[symbol] for symbol in described.full]
        return CountVectorizer(max_features=self.max_features).fit(corpus)

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Word-count vectors, shape (n_genes, max_features), of the genes with a summary; the others are missing."""
        known, unknown = split_known(symbols, self.hgnc)
        described = self.source.describe(known)
        vectors = self._vectorizer.transform([described.texts[s] for s in described.full]).toarray()
        return make_embeddings(self.meta, described.full, vectors,
                               {UNKNOWN_SYMBOL: unknown, NO_DESCRIPTION: [*described.partial, *described.none]})
