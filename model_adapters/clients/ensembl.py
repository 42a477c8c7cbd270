"""Ensembl REST: genomic and coding sequences by Ensembl gene id."""

from __future__ import annotations

import json
from typing import Literal

from genebench.errors import SourceFormatError
from model_adapters.clients.base import HttpClient

Region = Literal["gene", "cds"]


class EnsemblClient(HttpClient):
    """Gene sequences from the Ensembl REST API (`/sequence/id`, `/lookup/id`).

    "gene" is the genomic region of the gene (introns included); "cds" is the coding sequence of its
    canonical transcript.
    """

    name = "ensembl"
    default_base_url = "https://rest.ensembl.org"

    def is_not_found(self, status: int, body: bytes) -> bool:
        """Ensembl answers an unknown id with 400 and an error naming the id as not found."""
        return status == 404 or (status == 400 and b"not found" in body.lower())

    def sequence(self, ensembl_id: str, region: Region = "gene") -> str | None:
        """The sequence of one gene, or None when Ensembl has none (unknown id, non-coding gene for "cds").

        Raises:
            SourceFormatError: a response in an unexpected format.
        """
        ensembl_id = ensembl_id.split(".")[0]
        if region == "cds":
            body = self.fetch(f"lookup/id/{ensembl_id}", params={"content-type": "application/json"})
            if body is None:
                return None
            transcript = _canonical_transcript(body, ensembl_id)
            if transcript is None:
                return None
            seq_id, seq_type = transcript, "cds"
        else:
            seq_id, seq_type = ensembl_id, "genomic"
        text = self.fetch(f"sequence/id/{seq_id}", params={"type": seq_type, "content-type": "text/plain"})
        if text is None:
            return None
        sequence = text.decode("ascii", errors="replace").strip().upper()
        if not sequence or set(sequence) - set("ACGTN"):
            raise SourceFormatError(
                f"Ensembl sequence '{seq_id}': expected plain nucleotides (ACGTN), found {sequence[:60]!r}; "
                "check the base URL, or rerun if the response was cut short."
            )
        return sequence


def _canonical_transcript(body: bytes, ensembl_id: str) -> str | None:
    try:
        record = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceFormatError(
            f"Ensembl lookup '{ensembl_id}': expected JSON, found {body[:120]!r}; rerun if it was cut short."
        ) from exc
    canonical = record.get("canonical_transcript")
    if canonical and record.get("biotype", "protein_coding") == "protein_coding":
        return str(canonical).split(".")[0]
    return None
