"""Precomputed input: a table mapping gene symbol to vector, as shipped by Gene2vec, GenePT and others.

Formats: CSV / TSV (a symbol column and numeric columns; gzipped too), parquet (wide, or genebench's
`symbol` + `vector` format, so an embedding cache file loads as is), `.npy` with an index file (one
symbol per line), word2vec text (`n d` header optional, then `SYMBOL v1 ... vd`, as Gene2vec ships) and
Hugging Face datasets (a `save_to_disk` folder or a Hub id, with symbol and vector columns).
Table symbols are normalised to current HGNC symbols; renamed, ambiguous and unknown ones are counted in
the model notes and logged, and requested genes the table lacks are reported missing. A table is recorded by
its file name, size and sha256 (its revision is the sha256's first 12 characters), never by where it lies.
"""

from __future__ import annotations

import csv
import gzip
import logging
import zlib
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from genebench.embeddings import GeneEmbeddings
from genebench.errors import EmbeddingError, MissingSourceError, SourceFormatError
from genebench.model_info import ModelInfo, file_record
from genebench.symbols import SymbolMapper
from genebench.textfiles import open_text
from model_adapters.base import NON_FINITE, NOT_IN_TABLE, UNKNOWN_SYMBOL, make_embeddings, split_known

logger = logging.getLogger(__name__)

SYMBOL_COLUMNS = ("symbol", "gene", "gene_symbol", "Symbol", "Gene", "gene_name")
VECTOR_COLUMNS = ("vector", "embedding", "embeddings", "emb")


def _is_word2vec(path: Path) -> bool:
    """A header `n d`, or whitespace-separated `SYMBOL v1 ... vd` lines without commas or tabs."""
    with open_text(path) as handle:
        first = handle.readline().strip()
    fields = first.split()
    if len(fields) == 2 and all(f.isdigit() for f in fields):
        return True
    if "," in first or "\t" in first or len(fields) < 2:
        return False
    try:
        [float(f) for f in fields[1:]]
    except ValueError:
        return False
    return True


def read_word2vec(path: Path) -> tuple[list[str], np.ndarray]:
    """Symbols and vectors of a word2vec text file (header line `n d` optional, and checked when present)."""
    symbols, rows = [], []
    header = None
    with open_text(path) as handle:
        for number, line in enumerate(handle, 1):
            fields = line.split()
            if number == 1 and len(fields) == 2 and all(f.isdigit() for f in fields):
                header = (int(fields[0]), int(fields[1]))
                continue
            if not fields:
                continue
            try:
                rows.append([float(f) for f in fields[1:]])
            except ValueError as exc:
                raise SourceFormatError(f"word2vec file '{path}', line {number}: expected 'SYMBOL v1 ... vd', "
                                        f"found {line[:60]!r}.") from exc
            symbols.append(fields[0])
    if len({len(r) for r in rows}) > 1:
        raise SourceFormatError(f"word2vec file '{path}': expected every line to have the same number of values, "
                                f"found {sorted({len(r) for r in rows})}.")
    found = (len(rows), len(rows[0]) if rows else 0)
    if header is not None and header != found:
        raise SourceFormatError(f"word2vec file '{path}': its header says {header[0]} vectors of {header[1]} values, "
                                f"the body holds {found[0]} of {found[1]}; fix the header or the file.")
    return symbols, np.asarray(rows, dtype=np.float32)


def _symbol_column(frame: pd.DataFrame, source: str, index_column: str | None) -> str:
    """The column holding the symbols: one named like a symbol or gene column (any case), else the table's saved
    index, else the first column, said in a warning.

    Examples:
        >>> _symbol_column(pd.DataFrame({"0": [0.1], "Gene_Symbol": ["TP53"]}), "t.parquet", None)
        'Gene_Symbol'
    """
    named = {name.lower() for name in SYMBOL_COLUMNS}
    found = next((c for c in frame.columns if str(c).lower() in named), None)
    if found is None and index_column is None:
        found = frame.columns[0]
        logger.warning("table '%s': no column named like %s and no saved index; took the first column, '%s', as the "
                       "gene symbols (pass --symbol-column to choose).", source, "/".join(SYMBOL_COLUMNS[:3]), found)
    return found if found is not None else index_column


def _split_frame(frame: pd.DataFrame, source: str, symbol_column: str | None) -> tuple[list[str], np.ndarray]:
    """Symbol column + (a list column of vectors, or all remaining numeric columns).

    A frame whose index is not a plain row number (`DataFrame.to_parquet()` of a table indexed by symbol: pandas
    stores the index as a column and names it in the file's pandas metadata, and `read_parquet` restores it) has its
    index taken back as a column first.
    """
    index_column = None
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
        index_column = frame.columns[0]
    column = symbol_column or _symbol_column(frame, source, index_column)
    if column not in frame.columns:
        raise SourceFormatError(f"table '{source}': expected a symbol column '{column}', found "
                                f"{list(frame.columns)[:10]}; pass --symbol-column.")
    symbols = frame[column].astype(str).tolist()
    vector_column = next((c for c in VECTOR_COLUMNS if c in frame.columns), None)
    try:
        if vector_column is not None:
            vectors = np.stack([np.asarray(v, dtype=np.float32) for v in frame[vector_column]])
        else:
            values = frame.drop(columns=[column])
            try:  # one conversion for the whole block; column by column only to name a bad column
                vectors = values.to_numpy(dtype=np.float32)
            except (ValueError, TypeError):
                vectors = values.apply(pd.to_numeric).to_numpy(dtype=np.float32)
    except (ValueError, TypeError) as exc:
        raise SourceFormatError(
            f"table '{source}': expected a symbol column '{column}' and numeric vector columns, found columns "
            f"{list(frame.columns)[:10]} ({exc}); pass --symbol-column, or one vector column named 'vector'."
        ) from exc
    return symbols, vectors


FORMATS = ("CSV or TSV (gzipped too), parquet, .npy with --index, word2vec text, or a Hugging Face dataset "
           "(see `genebench run --help`)")
_PICKLE_PROTOCOLS = frozenset(range(2, 6))
WIDE = 4096
"""Columns above which a delimited table is parsed row by row, not by pyarrow (which pays per column)."""


def read_table(path: str | Path, *, index: str | Path | None = None, symbol_column: str | None = None,
               split: str = "train") -> tuple[list[str], np.ndarray, dict[str, Any]]:
    """Read any supported table.

    Returns:
        (symbols, vectors of shape (n, d), the table's record: `file_record` of each file, or a dataset's
        name and fingerprint).

    Raises:
        MissingSourceError: no such file or dataset.
        SourceFormatError: a file in none of `FORMATS`, damaged, empty, or holding vectors of unequal length.
    """
    path = Path(path)
    if path.is_dir() or (not path.exists() and str(path).count("/") == 1 and not path.suffix):
        return _read_dataset(path, symbol_column, split)
    if not path.exists():
        raise MissingSourceError(f"embedding table '{path}': file not found; pass an existing file or dataset id.")
    if not path.is_file():
        raise SourceFormatError(f"embedding table '{path}': expected a file, found a special file.")
    with open(path, "rb") as handle:
        head = handle.read(2)
    if len(head) == 2 and head[0] == 0x80 and head[1] in _PICKLE_PROTOCOLS:
        raise SourceFormatError(f"embedding table '{path}': a Python pickle, which genebench never loads (it could run "
                                f"code); save it as one of {FORMATS}.")
    try:
        symbols, vectors, version = _read_file(path, index, symbol_column)
    except (UnicodeDecodeError, EOFError, zlib.error, gzip.BadGzipFile, pd.errors.ParserError,
            pd.errors.EmptyDataError, pa.ArrowException, EmbeddingError, ValueError, TypeError) as exc:
        if isinstance(exc, SourceFormatError):
            raise
        if isinstance(exc, EmbeddingError):
            raise SourceFormatError(str(exc)) from exc
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SourceFormatError(f"embedding table '{path}': cannot be read as a table of vectors ({reason}); "
                                f"expected {FORMATS}.") from exc
    if len(symbols) == 0 or vectors.size == 0:
        raise SourceFormatError(f"embedding table '{path}': holds no vectors ({len(symbols)} rows, shape "
                                f"{vectors.shape}); expected one row per gene with its vector.")
    return symbols, vectors, version


def _read_file(path: Path, index: str | Path | None,
               symbol_column: str | None) -> tuple[list[str], np.ndarray, dict[str, Any]]:
    version: dict[str, Any] = {"table": file_record(path)}
    suffixes = [s for s in path.suffixes if s != ".gz"]
    kind = suffixes[-1] if suffixes else ""
    if kind == ".npy":
        if index is None:
            raise SourceFormatError(f"embedding table '{path}': a .npy file needs an index of symbols; pass "
                                    "--index FILE with one symbol per line, in row order.")
        symbols = [line.strip() for line in Path(index).read_text(encoding="utf-8").splitlines() if line.strip()]
        vectors = np.load(path, allow_pickle=False)
        if vectors.ndim != 2 or len(vectors) != len(symbols):
            raise SourceFormatError(f"embedding table '{path}': expected shape ({len(symbols)}, d) to match index "
                                    f"'{index}', found {vectors.shape}.")
        if not np.issubdtype(vectors.dtype, np.number):
            raise SourceFormatError(f"embedding table '{path}': expected a numeric array, found dtype {vectors.dtype}.")
        return symbols, vectors.astype(np.float32), {**version, "index": file_record(index)}
    if kind == ".parquet":
        import pyarrow.parquet as pq

        if {"symbol", "vector"} <= set(pq.read_schema(path).names):
            table = GeneEmbeddings.load(path)
            return list(table.symbols), table.vectors, version
        return (*_split_frame(pd.read_parquet(path), str(path), symbol_column), version)
    if _is_word2vec(path):
        return (*read_word2vec(path), version)
    sep = "\t" if kind in (".tsv", ".txt") else ","
    numeric = _read_numeric_text(path, sep, symbol_column)
    if numeric is not None:
        return (*numeric, version)
    frame = pd.read_csv(path, sep=sep, keep_default_na=False, na_values=[""], dtype={symbol_column or 0: str})
    return (*_split_frame(frame, str(path), symbol_column), version)


def _read_numeric_text(path: Path, sep: str, symbol_column: str | None) -> tuple[list[str], np.ndarray] | None:
    """A delimited table of a named symbol column and numeric columns, read by pyarrow at disk speed (each value
    parsed as float64, then rounded to float32, as Python's float() and NumPy do; an empty value is NaN, and nothing
    else is read as missing); None when the table is anything else, for `_split_frame` to read or explain."""
    import pyarrow.csv as pacsv

    named = {name.lower() for name in SYMBOL_COLUMNS}
    with open_text(path) as handle:
        header = next(csv.reader(handle, delimiter=sep), None)
        if not header or any(c in header for c in VECTOR_COLUMNS) or len(set(header)) < len(header):
            return None
        column = symbol_column or next((c for c in header if c.lower() in named), None)
        if column not in header:
            return None
        if len(header) > WIDE:
            return _parse_rows(csv.reader(handle, delimiter=sep), header, column)
        handle.seek(0)
        types = {name: pa.string() if name == column else pa.float64() for name in header}
        options = pacsv.ConvertOptions(column_types=types, null_values=[""], strings_can_be_null=False,
                                       quoted_strings_can_be_null=False)
        try:
            table = pacsv.read_csv(handle.buffer, parse_options=pacsv.ParseOptions(delimiter=sep),
                                   convert_options=options)
        except pa.ArrowInvalid:
            return None
    symbols = table.column(column).to_pylist()
    values = table.drop_columns([column]).columns
    columns = np.empty((len(values), len(symbols)), np.float32)  # one contiguous row per column, then transposed
    for j, value in enumerate(values):
        columns[j] = value.to_numpy()
    return symbols, np.ascontiguousarray(columns.T)


def _parse_rows(rows: Iterator[list[str]], header: list[str], column: str) -> tuple[list[str], np.ndarray] | None:
    """Symbols and vectors of the remaining `rows` of a delimited table, parsed row by row (for a very wide table,
    where a columnar reader pays per column); None when a row is not the header's length or not numeric."""
    at = header.index(column)
    symbols, vectors = [], []
    for row in rows:
        if len(row) != len(header):
            return None
        symbols.append(row[at])
        values = row[:at] + row[at + 1:]
        try:
            vectors.append(np.asarray([v or "nan" for v in values], dtype=np.float32))
        except ValueError:
            return None
    return symbols, np.stack(vectors) if vectors else np.zeros((0, len(header) - 1), np.float32)


def _read_dataset(path: Path, symbol_column: str | None, split: str) -> tuple[list[str], np.ndarray, dict[str, Any]]:
    import datasets

    if path.is_dir():
        loaded = datasets.load_from_disk(str(path))
    else:
        loaded = datasets.load_dataset(str(path), split=split)
    if isinstance(loaded, datasets.DatasetDict):
        loaded = loaded[split]
    version = {"dataset": path.name, "fingerprint": loaded._fingerprint}
    return (*_split_frame(loaded.to_pandas(), str(path), symbol_column), version)


def _check_duplicates(symbols: list[str], vectors: np.ndarray, path: Path) -> list[int]:
    """The first row of each symbol; a symbol listed again with a different vector is refused (identical repeats
    are harmless)."""
    first: dict[str, int] = {}
    for row, symbol in enumerate(symbols):
        if symbol not in first:
            first[symbol] = row
        elif not np.array_equal(vectors[row], vectors[first[symbol]], equal_nan=True):
            raise SourceFormatError(f"embedding table '{path}': symbol '{symbol}' is listed on rows "
                                    f"{first[symbol] + 1} and {row + 1} with different vectors; keep one row per "
                                    "symbol.")
    return list(first.values())


class PrecomputedAdapter:
    """Serve vectors from a precomputed table, with symbols normalised through HGNC.

    Args:
        model: the table's path, or a Hugging Face dataset id or folder.
        hgnc: the HGNC table.
        index: for `.npy`: a text file with one symbol per row of the array.
        symbol_column: the column holding symbols (default: the first of `SYMBOL_COLUMNS`, else the first).
        split: dataset split, for Hugging Face datasets.

    Examples:
        >>> PrecomputedAdapter("gene2vec_dim_200_iter_9_w2v.txt", hgnc=hgnc).encode(["TP53"])  # doctest: +SKIP
    """

    def __init__(self, model: str | Path, *, hgnc: pd.DataFrame, index: str | Path | None = None,
                 symbol_column: str | None = None, split: str = "train") -> None:
        self.path = Path(model)
        self.hgnc = hgnc
        self.index = index
        self.symbol_column = symbol_column
        self.split = split

    @cached_property
    def _table(self) -> tuple[dict[str, int], np.ndarray, dict[str, Any], dict[str, int], set[str]]:
        """(current symbol -> its row of the vectors, the vectors, the table's record, counts of what normalisation
        did, current symbols whose rows hold NaN or infinite values).

        A symbol listed twice with different vectors is an error (which one is meant?); an outdated symbol that
        renames onto a gene the table also lists loses to it, with a warning.
        """
        symbols, vectors, version = read_table(self.path, index=self.index, symbol_column=self.symbol_column,
                                               split=self.split)
        first = _check_duplicates(symbols, vectors, self.path)
        finite = np.isfinite(vectors).all(axis=1)
        mapper = SymbolMapper(self.hgnc)
        table, report, n_duplicate = mapper.rekey((symbols[row], row) for row in first if finite[row])
        bad = [symbols[row] for row in first if not finite[row]]
        non_finite = {current for current in mapper.resolve(bad).mapping.values() if current not in table}
        if n_duplicate:
            logger.warning("table '%s': %d rows name a gene another row already names once symbols are updated; "
                           "the row with the current symbol is kept", self.path, n_duplicate)
        if non_finite:
            logger.warning("table '%s': %d genes have NaN or infinite values and are reported missing as %s, e.g. %s",
                           self.path, len(non_finite), NON_FINITE, sorted(non_finite)[:3])
        counts = {"n_rows": len(symbols), "n_renamed": len(report.renamed), "n_ambiguous": len(report.ambiguous),
                  "n_unknown": len(report.unknown), "n_duplicate": n_duplicate, "n_non_finite": int((~finite).sum())}
        logger.info("table '%s': %s", self.path, counts)
        if report.unknown:
            logger.warning("table '%s': %d symbols are not HGNC symbols, e.g. %s", self.path, len(report.unknown),
                           report.unknown[:5])
        if report.ambiguous:
            logger.warning("table '%s': %d symbols are ambiguous, e.g. %s", self.path, len(report.ambiguous),
                           list(report.ambiguous.items())[:3])
        return table, vectors, version, counts, non_finite

    @cached_property
    def meta(self) -> ModelInfo:
        """The table's file name, size and sha256 (revision: the sha256's prefix), or a dataset's fingerprint."""
        table, vectors, record, _, _ = self._table
        dim = vectors.shape[1] if table else None
        revision = record["table"]["sha256"][:12] if "table" in record else record["fingerprint"]
        return ModelInfo(id=self.path.name, revision=revision, input="precomputed", pooling="none", dim=dim,
                         settings=record)

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """The table's vectors for `symbols`; genes it lacks are reported missing."""
        known, unknown = split_known(symbols, self.hgnc)
        table, matrix, _, counts, non_finite = self._table
        genes = [s for s in known if s in table]
        vectors = matrix[[table[s] for s in genes]] if genes else np.zeros((0, self.meta.dim or 0))
        absent = [s for s in known if s not in table and s not in non_finite]
        missing = {UNKNOWN_SYMBOL: unknown, NOT_IN_TABLE: absent, NON_FINITE: [s for s in known if s in non_finite]}
        return make_embeddings(self.meta, genes, vectors, missing, **counts)
