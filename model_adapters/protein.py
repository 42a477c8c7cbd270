"""Protein input: each gene's canonical UniProt sequence through a protein language model (ESM-2, ...).

The accession is the first of the gene's `uniprot_ids` in HGNC; the sequence comes from the UniProt REST
API and is cached on disk. The vector is the mean of the last hidden state over residues (special tokens
left out); a sequence longer than the context is chunked and the chunks' means are weighted by length.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from model_adapters.clients.uniprot import UniProtClient
from model_adapters.sequence import SequenceAdapter

DEFAULT_MODEL = "facebook/esm2_t33_650M_UR50D"


class ProteinAdapter(SequenceAdapter):
    """Encode canonical protein sequences with a protein language model.

    Args:
        model: Hub id or local folder, e.g. "facebook/esm2_t33_650M_UR50D".
        **settings: see `model_adapters.sequence.SequenceAdapter` (client: a `UniProtClient`).
    """

    INPUT = "protein"

    def __init__(self, model: str = DEFAULT_MODEL, **settings: Any) -> None:
        super().__init__(model, **settings)

    @cached_property
    def _client(self) -> UniProtClient:
        return self.client or UniProtClient()

    def source(self) -> tuple[str, dict[str, Any]]:
        return self._client.version, {}

    def sequences(self, genes: list[str]) -> dict[str, str]:
        accessions = dict(zip(self.hgnc["symbol"], self.hgnc["uniprot_ids"]))
        first = {s: accessions[s].split("|")[0].strip() for s in genes}
        found = self._client.sequences(a for a in first.values() if a)
        return {s: found[first[s]] for s in genes if found.get(first[s])}
