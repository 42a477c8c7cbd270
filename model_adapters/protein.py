"""Protein input: each gene's canonical UniProt sequence through a protein language model (ESM-2, ...).

The accession is the first of the gene's `uniprot_ids` in HGNC; the sequence comes from the UniProt REST
API and is cached on disk. The vector is the mean of the last hidden state over residues (special tokens
left out); a sequence longer than the context is chunked and the chunks' means are weighted by length.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import pandas as pd

from genebench.embeddings import GeneEmbeddings
from model_adapters.base import NO_SEQUENCE, UNKNOWN_SYMBOL, AdapterMeta, make_embeddings, split_known
from model_adapters.clients.uniprot import UniProtClient
from model_adapters.hf import HFEncoder, Pooling

DEFAULT_MODEL = "facebook/esm2_t33_650M_UR50D"


class ProteinAdapter:
    """Encode canonical protein sequences with a protein language model.

    Args:
        model: Hub id or local folder, e.g. "facebook/esm2_t33_650M_UR50D".
        hgnc: the HGNC table (`genebench.symbols.read_hgnc`), for gene -> UniProt accession.
        pooling: "mean" over residues, or the "cls" token.
        client: the UniProt client (default: the public REST API).
        revision, trust_remote_code, device, batch_size, max_length: see `model_adapters.hf.HFEncoder`.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        hgnc: pd.DataFrame,
        pooling: Pooling = "mean",
        client: UniProtClient | None = None,
        revision: str | None = None,
        trust_remote_code: bool = False,
        device: str | None = None,
        batch_size: int = 8,
        max_length: int | None = None,
    ) -> None:
        self.model = model
        self.hgnc = hgnc
        self.pooling = pooling
        self.client = client
        self.encoder = HFEncoder(model, revision=revision, trust_remote_code=trust_remote_code, device=device,
                                 batch_size=batch_size, max_length=max_length)

    @cached_property
    def _client(self) -> UniProtClient:
        return self.client or UniProtClient()

    @cached_property
    def meta(self) -> AdapterMeta:
        """Model, revision, pooling and sequence source."""
        return AdapterMeta(model_id=self.model, revision=self.encoder.location[1], input="protein",
                           pooling=self.pooling, trust_remote_code=self.encoder.trust_remote_code,
                           source_version=self._client.version,
                           settings={"max_length": self.encoder.max_length})

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Vectors for genes with a UniProt sequence; the others are reported missing."""
        known, unknown = split_known(symbols, self.hgnc)
        accessions = dict(zip(self.hgnc["symbol"], self.hgnc["uniprot_ids"]))
        first = {s: accessions[s].split("|")[0].strip() for s in known}
        found = self._client.sequences(a for a in first.values() if a)
        genes = [s for s in known if found.get(first[s])]
        vectors = self.encoder.encode_texts([found[first[s]] for s in genes], pooling=self.pooling,
                                            skip_special=True)
        no_sequence = [s for s in known if s not in set(genes)]
        return make_embeddings(self.meta, genes, vectors, {UNKNOWN_SYMBOL: unknown, NO_SEQUENCE: no_sequence},
                               n_sequences=len(genes), **self.encoder.notes)
