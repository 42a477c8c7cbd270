"""Map any gene symbol or identifier to its current approved HGNC symbol.

Case is ignored only where that is unambiguous; previous symbols and aliases resolve to the current
symbol. Every mapping reports what was renamed, ambiguous or unknown. The literal symbol "NA" is a
gene, never a missing value: every table here is read with ``keep_default_na=False``.
"""

from __future__ import annotations

import io
import json
import zlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TypeVar

import pandas as pd

from genebench.errors import SourceFormatError
from genebench.textfiles import open_text

V = TypeVar("V")

HGNC_COLUMNS = (
    "symbol",
    "name",
    "locus_group",
    "prev_symbol",
    "alias_symbol",
    "gene_group_id",
    "entrez_id",
    "ensembl_gene_id",
    "uniprot_ids",
    "date_modified",
)
_MULTI = ("prev_symbol", "alias_symbol", "gene_group_id", "uniprot_ids")


def read_hgnc(path: str | Path) -> pd.DataFrame:
    """Read HGNC's complete set, as TSV or JSON, plain or gzipped, into string columns.

    Returns a frame with one row per approved gene and the columns in `HGNC_COLUMNS`; multi-valued
    fields are "|"-joined strings. "NA" stays the string "NA".
    """
    path = Path(path)
    try:
        with open_text(path) as handle:
            text = handle.read()
        if text[:1] == "{":
            frame = _hgnc_json(json.loads(text), path)
        else:
            if text and not text.endswith("\n"):
                raise SourceFormatError(f"HGNC source '{path}': the file ends mid-line (a truncated download?); "
                                        "download hgnc_complete_set.txt again from genenames.org.")
            frame = pd.read_csv(io.StringIO(text), sep="\t", dtype=str, keep_default_na=False, na_filter=False)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as exc:
        raise SourceFormatError(
            f"HGNC source '{path}': cannot be read as HGNC's complete set (TSV or JSON): {exc}; "
            "pass the hgnc_complete_set.txt or .json download from genenames.org."
        ) from exc
    missing = [c for c in ("symbol", "name", "prev_symbol", "alias_symbol") if c not in frame.columns]
    if missing:
        raise SourceFormatError(
            f"HGNC source '{path}': expected columns {missing}, found {list(frame.columns)[:12]}; "
            "pass the hgnc_complete_set download from genenames.org."
        )
    if "status" in frame.columns:
        frame = frame[frame["status"].isin(["Approved", ""])]
    for column in HGNC_COLUMNS:
        if column not in frame.columns:
            frame[column] = ""
    frame = frame[list(HGNC_COLUMNS)].astype(str).reset_index(drop=True)
    for column in _MULTI:
        frame[column] = frame[column].str.strip('"')
    return frame


def hgnc_version(table: pd.DataFrame) -> str:
    """The newest `date_modified` in an HGNC table: the best available stamp of its release."""
    dates = table["date_modified"].replace("", None).dropna()
    return str(dates.max()) if len(dates) else "unknown"


def _hgnc_json(payload: dict, path: Path) -> pd.DataFrame:
    try:
        docs = payload["response"]["docs"]
    except (KeyError, TypeError) as exc:
        raise SourceFormatError(
            f"HGNC source '{path}': expected JSON with response.docs, as genenames.org serves it."
        ) from exc
    rows = []
    for doc in docs:
        row = {}
        for column in (*HGNC_COLUMNS, "status"):
            value = doc.get(column, "")
            row[column] = "|".join(map(str, value)) if isinstance(value, list) else str(value)
        rows.append(row)
    return pd.DataFrame(rows, dtype=str)


@dataclass
class SymbolReport:
    """What one mapping did: `mapping` holds each resolved input; the rest explains the others."""

    mapping: dict[str, str] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        """Counts of mapped, renamed, ambiguous and unknown inputs."""
        return {
            "n_mapped": len(self.mapping),
            "n_renamed": len(self.renamed),
            "n_ambiguous": len(self.ambiguous),
            "n_unknown": len(self.unknown),
        }


class SymbolMapper:
    """Resolve symbols and identifiers against one HGNC table.

    Resolution order: approved symbol; approved symbol ignoring case; previous symbol; alias; the same
    two ignoring case. The first rule with exactly one candidate wins; a rule with several candidates
    makes the input ambiguous.

    Examples:
        >>> import pandas as pd
        >>> table = pd.DataFrame({"symbol": ["TP53", "NAA10"], "name": ["", ""], "prev_symbol": ["", "ARD1A"],
        ...                       "alias_symbol": ["P53", ""]})
        >>> SymbolMapper(table).resolve(["p53", "ARD1A", "XYZ"]).mapping
        {'p53': 'TP53', 'ARD1A': 'NAA10'}
    """

    def __init__(self, table: pd.DataFrame, *, version: str = "unknown") -> None:
        self.table = table
        self.version = version
        self.approved = set(table["symbol"].tolist())

    @cached_property
    def _indexes(self) -> list[tuple[dict[str, set[str]], bool]]:
        """Where a symbol that is not approved is looked up, in order: (index, whether it is keyed upper-case).
        Built on the first such symbol: a table of current symbols never needs them."""
        table = self.table
        return [(_index(table["symbol"], table["symbol"].str.upper()), True),
                (_multi_index(table, "prev_symbol", upper=False), False),
                (_multi_index(table, "alias_symbol", upper=False), False),
                (_multi_index(table, "prev_symbol", upper=True), True),
                (_multi_index(table, "alias_symbol", upper=True), True)]

    @classmethod
    def from_file(cls, path: str | Path) -> SymbolMapper:
        """Read an HGNC complete set (see `read_hgnc`) and index it."""
        table = read_hgnc(path)
        return cls(table, version=hgnc_version(table))

    def resolve(self, symbols: Iterable[str]) -> SymbolReport:
        """Map each distinct input symbol to its current approved symbol, reporting what changed."""
        report = SymbolReport()
        for symbol in dict.fromkeys(symbols):
            candidates = self._candidates(symbol.strip())
            if len(candidates) == 1:
                (current,) = candidates
                report.mapping[symbol] = current
                if current != symbol:
                    report.renamed[symbol] = current
            elif candidates:
                report.ambiguous[symbol] = sorted(candidates)
            else:
                report.unknown.append(symbol)
        return report

    def rekey(self, pairs: Iterable[tuple[str, V]]) -> tuple[dict[str, V], SymbolReport, int]:
        """Key values by current symbol, dropping unknown and ambiguous symbols.

        Where several rows land on one gene, the row already named by its current symbol wins, else the first.

        Returns:
            (current symbol -> value, the resolution report, the number of rows that lost to another row).

        Examples:
            >>> table = pd.DataFrame({"symbol": ["TP53"], "name": [""], "prev_symbol": [""], "alias_symbol": ["P53"]})
            >>> SymbolMapper(table).rekey([("p53", 1), ("TP53", 2), ("XYZ", 3)])[0]
            {'TP53': 2}
        """
        pairs = list(pairs)
        report = self.resolve(symbol for symbol, _ in pairs)
        out: dict[str, V] = {}
        n_duplicate = 0
        for symbol, value in pairs:
            current = report.mapping.get(symbol)
            if current is None:
                continue
            if current in out:
                n_duplicate += 1
                if symbol != current:
                    continue
            out[current] = value
        return out, report, n_duplicate

    def _candidates(self, symbol: str) -> set[str]:
        if symbol in self.approved:
            return {symbol}
        for index, upper in self._indexes:
            found = index.get(symbol.upper() if upper else symbol)
            if found:
                return found
        return set()

    def by_identifier(self, column: str) -> dict[str, str]:
        """Map an identifier column (`ensembl_gene_id`, `entrez_id`, `uniprot_ids`) to symbols.

        Identifiers shared by several genes are left out.
        """
        index = _multi_index(self.table, column, upper=False)
        return {key: next(iter(found)) for key, found in index.items() if len(found) == 1}


def _index(symbols: pd.Series, keys: pd.Series) -> dict[str, set[str]]:
    index: dict[str, set[str]] = defaultdict(set)
    for key, symbol in zip(keys, symbols):
        if key:
            index[key].add(symbol)
    return dict(index)


def _multi_index(table: pd.DataFrame, column: str, *, upper: bool) -> dict[str, set[str]]:
    index: dict[str, set[str]] = defaultdict(set)
    for symbol, values in zip(table["symbol"], table[column]):
        for value in values.split("|"):
            value = value.strip()
            if value:
                index[value.upper() if upper else value].add(symbol)
    return dict(index)
