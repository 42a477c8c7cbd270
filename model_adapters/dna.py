"""DNA input: each gene's sequence through a DNA language model (Nucleotide Transformer, DNABERT-2, HyenaDNA).

The sequence is the gene's genomic region ("gene") or the CDS of its canonical transcript ("cds"), from
the Ensembl REST API by the Ensembl gene id in HGNC, cached on disk. A sequence longer than the context
is cut into context-sized chunks whose mean vectors are averaged, weighted by length.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import pandas as pd

from genebench.embeddings import GeneEmbeddings
from model_adapters.base import NO_SEQUENCE, UNKNOWN_SYMBOL, AdapterError, AdapterMeta, make_embeddings, split_known
from model_adapters.clients.ensembl import EnsemblClient, Region
from model_adapters.hf import HFEncoder, Pooling

DEFAULT_MODEL = "InstaDeepAI/nucleotide-transformer-v2-50m-multi-species"


class DnaAdapter:
    """Encode gene DNA sequences with a DNA language model.

    Args:
        model: Hub id or local folder.
        hgnc: the HGNC table, for gene -> Ensembl gene id.
        region: "gene" (genomic region, introns included) or "cds" (canonical transcript's coding sequence).
        max_bases: keep only the first `max_bases` nucleotides of each sequence (None: all, chunked).
        pooling: "mean" over nucleotide tokens, or the "cls" token of each chunk.
        client: the Ensembl client (default: the public REST API).
        revision, trust_remote_code, device, batch_size, max_length: see `model_adapters.hf.HFEncoder`.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        hgnc: pd.DataFrame,
        region: Region = "gene",
        max_bases: int | None = None,
        pooling: Pooling = "mean",
        client: EnsemblClient | None = None,
        revision: str | None = None,
        trust_remote_code: bool = False,
        device: str | None = None,
        batch_size: int = 8,
        max_length: int | None = None,
    ) -> None:
        if region not in ("gene", "cds"):
            raise AdapterError(f"DNA region '{region}': expected 'gene' or 'cds'; pass --region gene or --region cds.")
        self.model = model
        self.hgnc = hgnc
        self.region = region
        self.max_bases = max_bases
        self.pooling = pooling
        self.client = client
        self.encoder = HFEncoder(model, revision=revision, trust_remote_code=trust_remote_code, device=device,
                                 batch_size=batch_size, max_length=max_length)

    @cached_property
    def _client(self) -> EnsemblClient:
        return self.client or EnsemblClient()

    @cached_property
    def meta(self) -> AdapterMeta:
        """Model, revision, pooling, region and sequence source."""
        return AdapterMeta(model_id=self.model, revision=self.encoder.location[1], input="dna", pooling=self.pooling,
                           trust_remote_code=self.encoder.trust_remote_code,
                           source_version=f"{self._client.version}:{self.region}",
                           settings={"region": self.region, "max_bases": self.max_bases,
                                     "max_length": self.encoder.max_length})

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Vectors for genes with an Ensembl sequence; the others are reported missing."""
        known, unknown = split_known(symbols, self.hgnc)
        ensembl = dict(zip(self.hgnc["symbol"], self.hgnc["ensembl_gene_id"]))
        sequences = {}
        for symbol in known:
            sequence = self._client.sequence(ensembl[symbol], self.region) if ensembl[symbol] else None
            if sequence:
                sequences[symbol] = sequence[: self.max_bases] if self.max_bases else sequence
        genes = list(sequences)
        vectors = self.encoder.encode_texts([sequences[s] for s in genes], pooling=self.pooling, skip_special=True)
        no_sequence = [s for s in known if s not in sequences]
        return make_embeddings(self.meta, genes, vectors, {UNKNOWN_SYMBOL: unknown, NO_SEQUENCE: no_sequence},
                               n_sequences=len(genes), **self.encoder.notes)
