"""Gene descriptions: the text a description adapter encodes, from one of four sources.

- "refseq": NCBI RefSeq summaries from a local file: genebench's snapshot descriptions/refseq.parquet (symbol, name,
  summary) or the raw `refseq_gene_summary_9606.tsv.gz` (entrez_id, hgnc_symbol_2024, ..., summary).
- "ncbi": live NCBI E-utilities gene summaries, fetched by Entrez id and cached on disk.
- "hgnc": approved names only, from the HGNC table (offline).
- "csv": a user CSV with columns symbol, description (used verbatim).

Texts follow the reference exactly: "Gene symbol {symbol} full name {name} with the summary {summary}",
or "Gene symbol {symbol} full name {name}" for genes without a summary ("partial"). A gene with neither
a summary nor an HGNC name gets no text ("none") and is reported missing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from genebench.constants import SNAPSHOT_DIR
from genebench.errors import MissingSourceError, SourceFormatError
from genebench.symbols import SymbolMapper, hgnc_version
from model_adapters.base import AdapterError, file_version
from model_adapters.clients.ncbi import NCBIClient

logger = logging.getLogger(__name__)

SOURCES: tuple[str, ...] = ("refseq", "ncbi", "hgnc", "csv")
DEFAULT_REFSEQ = SNAPSHOT_DIR / "descriptions" / "refseq.parquet"
_RAW_REFSEQ = ("entrez_id", "hgnc_symbol_2024", "summary")


def describe(symbol: str, name: str, summary: str | None = None) -> str:
    """The reference's description text.

    Examples:
        >>> describe("TP53", "tumor protein p53")
        'Gene symbol TP53 full name tumor protein p53'
        >>> describe("TP53", "tumor protein p53", "A tumor suppressor.")
        'Gene symbol TP53 full name tumor protein p53 with the summary A tumor suppressor.'
    """
    text = f"Gene symbol {symbol} full name {name}"
    return f"{text} with the summary {summary}" if summary else text


@dataclass
class Descriptions:
    """One text per gene, and how complete each is.

    Attributes:
        texts: symbol -> text, for genes with a full or partial description.
        full: symbols whose text carries the source's summary (or the user's description).
        partial: symbols described by symbol and HGNC name only.
        none: symbols with no text at all.
        version: the source stamp the embedding cache keys on.
    """

    texts: dict[str, str] = field(default_factory=dict)
    full: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    none: list[str] = field(default_factory=list)
    version: str = ""

    def counts(self) -> dict[str, int]:
        """Counts of full, partial and missing descriptions."""
        return {"n_full": len(self.full), "n_partial": len(self.partial), "n_none": len(self.none)}


class DescriptionSource:
    """Reads descriptions for current HGNC symbols from one source.

    Args:
        source: "refseq", "ncbi", "hgnc" or "csv".
        hgnc: the HGNC table (`genebench.symbols.read_hgnc`).
        path: the refseq file (default: the snapshot's) or the user CSV.
        client: the NCBI client for source "ncbi" (default: the public E-utilities).
    """

    def __init__(self, source: str, *, hgnc: pd.DataFrame, path: str | Path | None = None,
                 client: NCBIClient | None = None) -> None:
        if source not in SOURCES:
            raise AdapterError(
                f"description source '{source}': expected one of {list(SOURCES)}; pass --description-source "
                "refseq (offline summaries), hgnc (names only), ncbi (live) or csv with a file."
            )
        if source == "csv" and path is None:
            raise AdapterError("description source 'csv': expected a CSV path (columns symbol, description); "
                               "pass --descriptions FILE.")
        self.source = source
        self.hgnc = hgnc
        self.path = Path(path) if path is not None else (DEFAULT_REFSEQ if source == "refseq" else None)
        self.client = client

    @cached_property
    def version(self) -> str:
        """`<source>:<file stamp, client or HGNC version>|hgnc:<version>`."""
        if self.source in ("refseq", "csv"):
            stamp = file_version(self._require_path())
        elif self.source == "ncbi":
            stamp = self._client().version
        else:
            stamp = "names"
        return f"{self.source}:{stamp}|hgnc:{hgnc_version(self.hgnc)}"

    def describe(self, symbols: Sequence[str]) -> Descriptions:
        """Texts for `symbols` (current HGNC symbols), with full / partial / none recorded."""
        names, extra = self._names, self._extra_texts(symbols)
        out = Descriptions(version=self.version)
        for symbol in dict.fromkeys(symbols):
            name = names.get(symbol, "")
            if extra.get(symbol):
                out.texts[symbol] = extra[symbol] if self.source == "csv" else describe(symbol, name, extra[symbol])
                out.full.append(symbol)
            elif name:
                out.texts[symbol] = describe(symbol, name)
                out.partial.append(symbol)
            else:
                out.none.append(symbol)
        logger.debug("descriptions (%s): %d full, %d partial, %d none", self.source, *out.counts().values())
        return out

    def coverage(self, symbols: Sequence[str]) -> dict[str, int]:
        """How many of `symbols` get a full description, their symbol and HGNC name only, or no text at all."""
        described = self.describe(symbols)
        return {"full": len(described.full), "name_only": len(described.partial), "missing": len(described.none)}

    def lengths(self, symbols: Sequence[str]) -> list[int]:
        """Characters of the text each of `symbols` is encoded from (0 without one), a measure that follows its
        tokens; 1 each from the live NCBI source, whose texts are fetched as they are needed."""
        if self.source == "ncbi":
            return [1] * len(symbols)
        texts = self.describe(symbols).texts
        return [len(texts.get(symbol, "")) for symbol in symbols]

    def by_length(self, symbols: Sequence[str]) -> list[str]:
        """`symbols`, longest text first (stable); the live NCBI source keeps their order (fetched as needed)."""
        if self.source == "ncbi":
            return list(symbols)
        names, extra = self._names, self._extra_texts(symbols)
        return sorted(symbols, key=lambda symbol: -len(extra.get(symbol) or names.get(symbol, "")))

    @cached_property
    def _names(self) -> dict[str, str]:
        """HGNC symbol -> approved name."""
        return dict(zip(self.hgnc["symbol"], self.hgnc["name"]))

    @cached_property
    def _symbol_by_entrez(self) -> dict[str, str]:
        """Entrez id -> HGNC symbol, for the genes that have one."""
        return {e: s for s, e in zip(self.hgnc["symbol"], self.hgnc["entrez_id"]) if e}

    def _require_path(self) -> Path:
        if self.path is None or not self.path.exists():
            raise MissingSourceError(
                f"description source '{self.source}': file '{self.path}' not found; pass --descriptions with "
                "the refseq_gene_summary_9606.tsv.gz download or genebench's descriptions/refseq.parquet."
                if self.source == "refseq" else
                f"description source 'csv': file '{self.path}' not found; pass an existing CSV."
            )
        return self.path

    def _client(self) -> NCBIClient:
        if self.client is None:
            self.client = NCBIClient()
        return self.client

    def _extra_texts(self, symbols: Sequence[str]) -> dict[str, str]:
        """symbol -> summary (or the CSV's description) from the source; empty for "hgnc"."""
        if self.source == "hgnc":
            return {}
        if self.source == "ncbi":
            by_entrez, wanted = self._symbol_by_entrez, set(symbols)
            records = self._client().summaries(e for e, s in by_entrez.items() if s in wanted)
            return {by_entrez[e]: r["summary"] for e, r in records.items() if e in by_entrez and r["summary"]}
        return self._file_texts

    @cached_property
    def _file_texts(self) -> dict[str, str]:
        """The refseq or CSV file's texts by current symbol, read once."""
        path = self._require_path()
        if self.source == "csv":
            return self._read_csv(path)
        return self._read_refseq(path)

    def _read_csv(self, path: Path) -> dict[str, str]:
        frame = _read_table(path)
        if not {"symbol", "description"} <= set(frame.columns):
            raise SourceFormatError(
                f"description file '{path}': expected columns 'symbol' and 'description', found "
                f"{list(frame.columns)}; rename the columns."
            )
        return self._by_current_symbol(frame["symbol"], frame["description"], path)

    def _read_refseq(self, path: Path) -> dict[str, str]:
        frame = _read_table(path)
        if set(_RAW_REFSEQ) <= set(frame.columns):
            by_entrez = self._symbol_by_entrez
            return {by_entrez[str(e)]: str(t) for e, t in zip(frame["entrez_id"], frame["summary"])
                    if str(e) in by_entrez and str(t).strip()}
        if {"symbol", "summary"} <= set(frame.columns):
            return self._by_current_symbol(frame["symbol"], frame["summary"], path)
        raise SourceFormatError(
            f"refseq file '{path}': expected columns (symbol, name, summary) or {list(_RAW_REFSEQ)}, found "
            f"{list(frame.columns)}; pass genebench's descriptions/refseq.parquet or refseq_gene_summary_9606.tsv.gz."
        )

    def _by_current_symbol(self, symbols: pd.Series, texts: pd.Series, path: Path) -> dict[str, str]:
        described = [(s, t.strip()) for s, t in zip(symbols.astype(str), texts.astype(str)) if t.strip()]
        out, report, _ = SymbolMapper(self.hgnc).rekey(described)
        if report.renamed or report.unknown or report.ambiguous:
            logger.info("descriptions '%s': %d renamed, %d unknown, %d ambiguous symbols", path.name,
                        len(report.renamed), len(report.unknown), len(report.ambiguous))
        return out


def _read_table(path: Path) -> pd.DataFrame:
    """A parquet, CSV or TSV (gzipped or not) as strings; "NA" stays a gene symbol."""
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path).fillna("").astype(str)
        sep = "\t" if ".tsv" in path.suffixes or ".txt" in path.suffixes else ","
        return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_filter=False)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise SourceFormatError(f"description file '{path}': cannot be read ({exc}); pass a CSV, TSV or parquet.") \
            from exc
