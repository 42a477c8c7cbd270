"""UniProt REST: canonical protein sequences by accession (`/uniprotkb/accessions?format=fasta`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from genebench.errors import SourceFormatError
from model_adapters.clients.base import HttpClient

ACCESSION = re.compile(r"^([OPQ][0-9][A-Z0-9]{3}[0-9]|[A-NR-Z][0-9]([A-Z][A-Z0-9]{2}[0-9]){1,2})$")
_AMINO_ACIDS = set("ACDEFGHIKLMNPQRSTVWYXBZUO")


class UniProtClient(HttpClient):
    """Canonical sequences from the UniProt REST API, `batch_size` accessions per request."""

    name = "uniprot"
    default_base_url = "https://rest.uniprot.org"

    def __init__(self, base_url: str | None = None, *, batch_size: int = 100, **kwargs) -> None:
        super().__init__(base_url, **kwargs)
        self.batch_size = batch_size

    def sequences(self, accessions: Iterable[str]) -> dict[str, str]:
        """Accession -> canonical sequence for the valid accessions UniProt returns."""
        valid = sorted({a.strip() for a in accessions if ACCESSION.match(a.strip())})
        found: dict[str, str] = {}
        for start in range(0, len(valid), self.batch_size):
            batch = ",".join(valid[start:start + self.batch_size])
            body = self.fetch("uniprotkb/accessions", params={"accessions": batch, "format": "fasta"})
            if body is not None:
                found.update(parse_fasta(body.decode("utf-8", errors="replace"), source=self.base_url))
        return found


def parse_fasta(text: str, *, source: str = "fasta") -> dict[str, str]:
    """UniProt FASTA -> {accession: sequence}; the accession is the header's second "|" field.

    Examples:
        >>> parse_fasta(">sp|P04637|P53_HUMAN Cellular tumor antigen p53\\nMEEPQSD\\nPSVEP\\n")
        {'P04637': 'MEEPQSDPSVEP'}
    """
    records: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(">"):
            fields = line[1:].split("|")
            accession = fields[1] if len(fields) > 2 else line[1:].split()[0]
            current = records.setdefault(accession, [])
        elif line:
            if current is None or set(line.upper()) - _AMINO_ACIDS:
                raise SourceFormatError(
                    f"UniProt response from '{source}': expected FASTA (>sp|ACCESSION|NAME then residues), found "
                    f"{line[:60]!r}; check the base URL, or rerun if the response was cut short."
                )
            current.append(line)
    return {accession: "".join(lines) for accession, lines in records.items() if lines}
