"""Baselines: bag-of-words over gene descriptions (the paper's classical baseline) and seeded random vectors.

The bag-of-words vocabulary is fitted on the descriptions of every gene in the HGNC table, never on the
genes being encoded, so a gene's vector does not depend on which other genes are asked for. The random
baseline draws each gene's vector from a generator seeded by (seed, hash of the symbol): the same gene
always gets the same vector, whatever set it is encoded in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from genebench.constants import DEFAULT_SEED
from genebench.embeddings import GeneEmbeddings
from genebench.model_info import ModelInfo
from model_adapters.base import NO_DESCRIPTION, UNKNOWN_SYMBOL, AdapterError, make_embeddings, split_known
from model_adapters.clients.ncbi import NCBIClient
from model_adapters.description_sources import DescriptionSource


class BagOfWordsAdapter:
    """Word counts of each gene's description over the `max_features` most frequent words.

    Args:
        model: the name to record.
        hgnc: the HGNC table.
        source: description source ("refseq", "ncbi", "hgnc", "csv"); see `model_adapters.description_sources`.
        descriptions: the refseq file or user CSV.
        max_features: vocabulary size (the most frequent words across all HGNC genes' descriptions).
        ncbi_client: client for source "ncbi".
    """

    def __init__(self, model: str = "bag-of-words", *, hgnc: pd.DataFrame, source: str = "refseq",
                 descriptions: str | Path | None = None, max_features: int = 1024,
                 ncbi_client: NCBIClient | None = None) -> None:
        self.model = model
        self.hgnc = hgnc
        self.source = DescriptionSource(source, hgnc=hgnc, path=descriptions, client=ncbi_client)
        self.max_features = max_features

    @cached_property
    def meta(self) -> ModelInfo:
        """Source version and vocabulary size."""
        return ModelInfo(id=self.model, revision="sklearn-countvectorizer", input="bag-of-words",
                           pooling="counts", source_version=self.source.version,
                           settings={"source": self.source.source, "max_features": self.max_features})

    @cached_property
    def _vectorizer(self):
        from sklearn.feature_extraction.text import CountVectorizer

        corpus = self.source.describe(list(self.hgnc["symbol"])).texts
        return CountVectorizer(stop_words="english", max_features=self.max_features, min_df=2).fit(corpus.values())

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Word-count vectors, shape (n_genes, max_features); undescribed genes are reported missing."""
        known, unknown = split_known(symbols, self.hgnc)
        described = self.source.describe(known)
        genes = list(described.texts)
        vectors = self._vectorizer.transform([described.texts[s] for s in genes]).toarray()
        return make_embeddings(self.meta, genes, vectors, {UNKNOWN_SYMBOL: unknown, NO_DESCRIPTION: described.none})


class RandomAdapter:
    """A seeded random vector per gene: the floor every model should beat.

    Args:
        model: the name to record.
        hgnc: the HGNC table (unknown symbols get no vector).
        dim: vector length.
        seed: the seed; with the symbol it fixes each gene's vector.

    Examples:
        >>> import pandas as pd
        >>> hgnc = pd.DataFrame({"symbol": ["TP53"]})
        >>> RandomAdapter(hgnc=hgnc, dim=3).encode(["TP53"]).vectors.shape
        (1, 3)
    """

    def __init__(self, model: str = "random", *, hgnc: pd.DataFrame, dim: int = 256, seed: int = DEFAULT_SEED) -> None:
        for name, value, low in (("dim", dim, 1), ("seed", seed, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise AdapterError(f"random input: {name} must be an integer >= {low}, found {value!r}.")
        self.model = model
        self.hgnc = hgnc
        self.dim = dim
        self.seed = seed

    @property
    def meta(self) -> ModelInfo:
        """Dimension and seed."""
        return ModelInfo(id=self.model, revision=f"seed={self.seed}", input="random", pooling="none",
                           dim=self.dim, settings={"dim": self.dim, "seed": self.seed})

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Standard-normal vectors, shape (n_genes, dim), one generator per (seed, symbol)."""
        known, unknown = split_known(symbols, self.hgnc)
        vectors = [
            np.random.default_rng([self.seed, int(hashlib.sha256(s.encode()).hexdigest()[:16], 16)])
            .standard_normal(self.dim)
            for s in known
        ]
        return make_embeddings(self.meta, known, vectors, {UNKNOWN_SYMBOL: unknown})
