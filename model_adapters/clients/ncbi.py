"""NCBI E-utilities: gene summaries by Entrez id (`esummary.fcgi?db=gene&retmode=json`)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from genebench.errors import SourceFormatError
from model_adapters.clients.base import HttpClient


class NCBIClient(HttpClient):
    """Gene summaries from NCBI E-utilities, up to `batch_size` ids per request.

    Args:
        api_key: an NCBI API key (raises the rate limit from 3 to 10 requests/s); optional.
        batch_size: Entrez ids per esummary request.
        **kwargs: see `HttpClient`.
    """

    name = "ncbi"
    default_base_url = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"

    def __init__(self, base_url: str | None = None, *, api_key: str | None = None, batch_size: int = 200,
                 **kwargs) -> None:
        super().__init__(base_url, **kwargs)
        self.api_key = api_key
        self.batch_size = batch_size

    def summaries(self, entrez_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """Entrez id -> {"name": symbol, "description": full name, "summary": text} for ids NCBI knows.

        Raises:
            SourceFormatError: a response that is not esummary JSON.
        """
        ids = sorted({str(i) for i in entrez_ids if str(i).isdigit()}, key=int)
        found: dict[str, dict[str, str]] = {}
        for start in range(0, len(ids), self.batch_size):
            params = {"db": "gene", "retmode": "json", "id": ",".join(ids[start:start + self.batch_size])}
            if self.api_key:
                params["api_key"] = self.api_key
            body = self.fetch("esummary.fcgi", params=params)
            if body is None:
                continue
            found.update(parse_esummary(body, source=f"{self.base_url}/esummary.fcgi"))
        return found


def parse_esummary(body: bytes, *, source: str = "esummary") -> dict[str, dict[str, str]]:
    """Parse an esummary db=gene JSON body; records with an `error` (unknown ids) are left out.

    Examples:
        >>> parse_esummary(b'{"result": {"uids": ["7157"], "7157": {"name": "TP53", "description": "tumor protein p53",'
        ...                b' "summary": "This gene encodes a tumor suppressor."}}}')["7157"]["name"]
        'TP53'
    """
    try:
        result = json.loads(body)["result"]
        uids = result["uids"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise SourceFormatError(
            f"NCBI response '{source}': expected esummary JSON with result.uids, found {body[:120]!r}; "
            "check the base URL, or rerun if the response was cut short."
        ) from exc
    records = {}
    for uid in uids:
        record = result.get(uid) or {}
        if "error" not in record:
            records[str(uid)] = {key: str(record.get(key) or "") for key in ("name", "description", "summary")}
    return records
