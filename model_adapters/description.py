"""Description input: each gene's text description through a text encoder.

sentence-transformers models (a `modules.json` in the folder or repo) run through their own modules;
any other transformers encoder is mean-pooled over its last hidden state.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import pandas as pd

from genebench.embeddings import GeneEmbeddings
from genebench.model_info import ModelInfo
from model_adapters.base import NO_DESCRIPTION, UNKNOWN_SYMBOL, make_embeddings, split_known
from model_adapters.clients.ncbi import NCBIClient
from model_adapters.description_sources import DescriptionSource
from model_adapters.hf import HFEncoder, Pooling, SentenceEncoder, dtype_name, is_sentence_transformer, resolve_model

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class DescriptionAdapter:
    """Encode "Gene symbol X full name Y with the summary Z" texts with a text model.

    Args:
        model: Hub id or local folder of a text encoder.
        hgnc: the HGNC table (`genebench.symbols.read_hgnc`).
        source: description source: "refseq", "ncbi", "hgnc" or "csv".
        descriptions: the refseq file or user CSV (see `model_adapters.description_sources`).
        pooling: "mean" or "cls" for plain transformers encoders; sentence-transformers use their own.
        revision: commit, tag or branch of the model.
        trust_remote_code: allow code shipped with the model to run.
        device: "cuda", "mps" or "cpu"; None picks the best available.
        dtype: precision of the forward pass: "auto" (see `model_adapters.hf.select_dtype`), "float32",
            "bfloat16" or "float16".
        batch_size: texts per forward pass.
        ncbi_client: client for source "ncbi".

    Examples:
        >>> adapter = DescriptionAdapter("all-MiniLM-L6-v2", hgnc=hgnc, source="hgnc")  # doctest: +SKIP
        >>> adapter.encode(["TP53", "BRCA1"]).vectors.shape  # doctest: +SKIP
        (2, 384)
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        hgnc: pd.DataFrame,
        source: str = "refseq",
        descriptions: str | Path | None = None,
        pooling: Pooling = "mean",
        revision: str | None = None,
        trust_remote_code: bool = False,
        device: str | None = None,
        dtype: str = "auto",
        batch_size: int = 32,
        ncbi_client: NCBIClient | None = None,
    ) -> None:
        self.model = model
        self.hgnc = hgnc
        self.source = DescriptionSource(source, hgnc=hgnc, path=descriptions, client=ncbi_client)
        self.pooling = pooling
        self.revision = revision
        self.trust_remote_code = trust_remote_code
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size

    @cached_property
    def _encoder(self) -> SentenceEncoder | HFEncoder:
        path, revision = resolve_model(self.model, self.revision)
        settings = dict(revision=self.revision, trust_remote_code=self.trust_remote_code, device=self.device,
                        dtype=self.dtype, batch_size=self.batch_size)
        if is_sentence_transformer(path, revision):
            return SentenceEncoder(self.model, **settings)
        return HFEncoder(self.model, **settings)

    @cached_property
    def meta(self) -> ModelInfo:
        """Model, revision, pooling, precision and description-source version."""
        is_st = isinstance(self._encoder, SentenceEncoder)
        return ModelInfo(
            id=self.model,
            revision=self._encoder.location[1],
            input="description",
            pooling="sentence-transformers" if is_st else self.pooling,
            trust_remote_code=self.trust_remote_code,
            source_version=self.source.version,
            settings={"source": self.source.source, "dtype": dtype_name(self._encoder.torch_dtype)},
        )

    def encoding_order(self, symbols: Sequence[str]) -> list[str]:
        """Longest description first: `CachedEncoder` encodes in this order, so each chunk's batches pad little."""
        return self.source.by_length(symbols)

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Vectors for genes with a description; unknown and undescribed genes are reported missing."""
        known, unknown = split_known(symbols, self.hgnc)
        described = self.source.describe(known)
        genes = list(described.texts)
        vectors = self._encode_texts([described.texts[s] for s in genes])
        return make_embeddings(self.meta, genes, vectors, {UNKNOWN_SYMBOL: unknown, NO_DESCRIPTION: described.none},
                               n_parameters=self._encoder.n_parameters, **self._encoder.notes)

    def encode_entities(self, ids: Sequence[str], texts: Sequence[str]) -> GeneEmbeddings:
        """Vectors for non-gene entities (e.g. diseases) from their texts, with the same encoder as the genes."""
        return make_embeddings(self.meta, list(ids), self._encode_texts(list(texts)), {})

    def _encode_texts(self, texts: list[str]):
        """sentence-transformers pool their own way; other encoders use `pooling`."""
        if isinstance(self._encoder, SentenceEncoder):
            return self._encoder.encode_texts(texts)
        return self._encoder.encode_texts(texts, pooling=self.pooling)
