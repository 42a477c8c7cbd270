"""Description input: each gene's text description through a text encoder.

With torch installed, sentence-transformers models (a `modules.json` in the folder or repo) run through their
own modules, and any other transformers encoder is mean-pooled over its last hidden state. Without torch (or
with `runtime="numpy"`), BERT sentence-transformers models such as the default all-MiniLM-L6-v2 run in NumPy
(`model_adapters.numpy_encoder`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from genebench.constants import RUNTIMES
from genebench.embeddings import GeneEmbeddings
from genebench.model_info import ModelInfo
from genebench.optional import installed
from model_adapters.base import NO_DESCRIPTION, UNKNOWN_SYMBOL, AdapterError, Pooling, make_embeddings, split_known
from model_adapters.clients.ncbi import NCBIClient
from model_adapters.description_sources import DescriptionSource
from model_adapters.hub import is_sentence_transformer, resolve_model
from model_adapters.numpy_encoder import NumpySentenceEncoder

if TYPE_CHECKING:
    from model_adapters.hf import HFEncoder, SentenceEncoder

logger = logging.getLogger(__name__)

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
        batch_size: at most this many texts per forward pass, whose batches are filled by token count (see
            `model_adapters.base.plan_batches`); None: the runtime's own (128).
        runtime: "torch", "numpy" (BERT sentence-transformers models only, float32 on the CPU) or "auto":
            torch when it is installed, else numpy.
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
        batch_size: int | None = None,
        runtime: str = "auto",
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
        if runtime not in RUNTIMES:
            raise AdapterError(f"runtime '{runtime}': expected one of {list(RUNTIMES)}.")
        self.runtime = runtime

    @cached_property
    def _runtime(self) -> str:
        """"torch" or "numpy": `runtime`, with "auto" resolved by what is installed."""
        if self.runtime != "auto":
            return self.runtime
        if all(installed(m) for m in ("torch", "transformers", "sentence_transformers")):
            return "torch"
        logger.info("torch is not installed: %s runs in NumPy, in float32 on the CPU (with the `torch` extra it runs "
                    "in bf16 where the CPU supports it, and on GPUs)", self.model.split("/")[-1])
        return "numpy"

    @cached_property
    def _encoder(self) -> SentenceEncoder | HFEncoder | NumpySentenceEncoder:
        settings: dict[str, Any] = dict(revision=self.revision, device=self.device, dtype=self.dtype)
        if self.batch_size is not None:
            settings["batch_size"] = self.batch_size
        if self._runtime == "numpy":
            return NumpySentenceEncoder(self.model, **settings)
        from model_adapters.hf import HFEncoder, SentenceEncoder

        path, revision = resolve_model(self.model, self.revision)
        settings["trust_remote_code"] = self.trust_remote_code
        if is_sentence_transformer(path, revision):
            return SentenceEncoder(self.model, **settings)
        return HFEncoder(self.model, **settings)

    @property
    def _pools_itself(self) -> bool:
        """Whether the encoder is a sentence-transformers model (it pools its own way, not by `pooling`)."""
        if isinstance(self._encoder, NumpySentenceEncoder):
            return True
        from model_adapters.hf import SentenceEncoder

        return isinstance(self._encoder, SentenceEncoder)

    @cached_property
    def meta(self) -> ModelInfo:
        """Model, revision, pooling, precision and description-source version."""
        runtime = {"runtime": "numpy"} if self._runtime == "numpy" else {}  # torch, the default, is not named
        return ModelInfo(
            id=self.model,
            revision=self._encoder.location[1],
            input="description",
            pooling="sentence-transformers" if self._pools_itself else self.pooling,
            trust_remote_code=self.trust_remote_code,
            source_version=self.source.version,
            settings={"source": self.source.source, "dtype": self._encoder.precision, **runtime},
        )

    def encoding_order(self, symbols: Sequence[str]) -> list[str]:
        """Longest description first: `CachedEncoder` encodes in this order, so each chunk's batches pad little."""
        return self.source.by_length(symbols)

    def encoding_cost(self, symbols: Sequence[str]) -> list[int]:
        """What encoding each gene costs, in characters of its text: `CachedEncoder`'s progress and ETA count
        these, since the longest texts go first and cost the most."""
        return self.source.lengths(symbols)

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
        if self._pools_itself:
            return self._encoder.encode_texts(texts)
        return self._encoder.encode_texts(texts, pooling=self.pooling)
