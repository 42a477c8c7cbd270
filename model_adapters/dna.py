"""DNA input: each gene's sequence through a DNA language model (Nucleotide Transformer, DNABERT-2, HyenaDNA).

The sequence is the gene's genomic region ("gene") or the CDS of its canonical transcript ("cds"), from
the Ensembl REST API by the Ensembl gene id in HGNC, cached on disk. A sequence longer than the context
is cut into context-sized chunks whose mean vectors are averaged, weighted by length.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from model_adapters.base import AdapterError
from model_adapters.clients.ensembl import EnsemblClient, Region
from model_adapters.sequence import SequenceAdapter

DEFAULT_MODEL = "InstaDeepAI/nucleotide-transformer-v2-50m-multi-species"


class DnaAdapter(SequenceAdapter):
    """Encode gene DNA sequences with a DNA language model.

    Args:
        model: Hub id or local folder.
        region: "gene" (genomic region, introns included) or "cds" (canonical transcript's coding sequence).
        max_bases: keep only the first `max_bases` nucleotides of each sequence (None: all, chunked).
        **settings: see `model_adapters.sequence.SequenceAdapter` (client: an `EnsemblClient`).
    """

    INPUT = "dna"

    def __init__(self, model: str = DEFAULT_MODEL, *, region: Region = "gene", max_bases: int | None = None,
                 **settings: Any) -> None:
        if region not in ("gene", "cds"):
            raise AdapterError(f"DNA region '{region}': expected 'gene' or 'cds'; pass --region gene or --region cds.")
        super().__init__(model, **settings)
        self.region = region
        self.max_bases = max_bases

    @cached_property
    def _client(self) -> EnsemblClient:
        return self.client or EnsemblClient()

    def source(self) -> tuple[str, dict[str, Any]]:
        return f"{self._client.version}:{self.region}", {"region": self.region, "max_bases": self.max_bases}

    def sequences(self, genes: list[str]) -> dict[str, str]:
        ensembl = dict(zip(self.hgnc["symbol"], self.hgnc["ensembl_gene_id"]))
        found = {}
        for symbol in genes:
            sequence = self._client.sequence(ensembl[symbol], self.region) if ensembl[symbol] else None
            if sequence:
                found[symbol] = sequence[: self.max_bases] if self.max_bases else sequence
        return found
