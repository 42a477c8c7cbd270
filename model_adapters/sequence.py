"""What the sequence inputs share: fetch one sequence per gene, encode it with a Hugging Face model, pool."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar

import pandas as pd

from genebench.embeddings import GeneEmbeddings
from genebench.model_info import ModelInfo
from model_adapters.base import NO_SEQUENCE, UNKNOWN_SYMBOL, Pooling, make_embeddings, split_known
from model_adapters.hf import HFEncoder, dtype_name


class SequenceAdapter:
    """Base of the DNA and protein adapters; subclasses say where sequences come from.

    Args:
        model: Hub id or local folder.
        hgnc: the HGNC table (`genebench.symbols.read_hgnc`), for gene -> sequence identifier.
        pooling: "mean" over sequence tokens, or the "cls" token of each chunk.
        client: the sequence client (default: the public REST API).
        revision, trust_remote_code, device, dtype, batch_size, max_length: see `model_adapters.hf.HFEncoder`.
    """

    INPUT: ClassVar[str]

    def __init__(self, model: str, *, hgnc: pd.DataFrame, pooling: Pooling = "mean", client: Any = None,
                 revision: str | None = None, trust_remote_code: bool = False, device: str | None = None,
                 dtype: str = "auto", batch_size: int = 8, max_length: int | None = None) -> None:
        self.model = model
        self.hgnc = hgnc
        self.pooling = pooling
        self.client = client
        self.encoder = HFEncoder(model, revision=revision, trust_remote_code=trust_remote_code, device=device,
                                 dtype=dtype, batch_size=batch_size, max_length=max_length)

    def sequences(self, genes: list[str]) -> dict[str, str]:
        """Gene -> sequence, for the genes that have one."""
        raise NotImplementedError

    def source(self) -> tuple[str, dict[str, Any]]:
        """The sequence source's version, and the settings that change which sequence a gene gets."""
        raise NotImplementedError

    @cached_property
    def meta(self) -> ModelInfo:
        """Model, revision, pooling, precision and sequence source."""
        version, settings = self.source()
        return ModelInfo(id=self.model, revision=self.encoder.location[1], input=self.INPUT,
                           pooling=self.pooling, trust_remote_code=self.encoder.trust_remote_code,
                           source_version=version, settings={**settings, "max_length": self.encoder.max_length,
                                                                   "dtype": dtype_name(self.encoder.torch_dtype)})

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Vectors for genes with a sequence; the others are reported missing."""
        known, unknown = split_known(symbols, self.hgnc)
        found = self.sequences(known)
        genes = [s for s in known if s in found]
        vectors = self.encoder.encode_texts([found[s] for s in genes], pooling=self.pooling, skip_special=True)
        no_sequence = [s for s in known if s not in found]
        return make_embeddings(self.meta, genes, vectors, {UNKNOWN_SYMBOL: unknown, NO_SEQUENCE: no_sequence},
                               n_sequences=len(genes), n_parameters=self.encoder.n_parameters, **self.encoder.notes)
