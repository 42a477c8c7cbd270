"""Gene embeddings: the one thing every adapter produces and the probe engine consumes."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from genebench.atomic import write_atomic
from genebench.errors import EmbeddingError
from genebench.model_info import ModelInfo


@dataclass
class GeneEmbeddings:
    """A table mapping gene symbol to vector, with where it came from and what it lacks.

    Attributes:
        symbols: shape (n_genes,), current HGNC symbols.
        vectors: shape (n_genes, n_dims), float32.
        model: the record of the model that made the vectors (None for a bare table).
        missing: reason -> symbols the adapter could not encode (never filled with random vectors).
    """

    symbols: np.ndarray
    vectors: np.ndarray
    model: ModelInfo | None = None
    missing: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.symbols = np.asarray(self.symbols, dtype=object)
        self.vectors = np.asarray(self.vectors, dtype=np.float32)
        if self.vectors.ndim != 2 or len(self.vectors) != len(self.symbols):
            raise EmbeddingError(
                f"embeddings: expected vectors of shape (n_genes, n_dims) with n_genes={len(self.symbols)}, "
                f"found shape {self.vectors.shape}."
            )

    @property
    def dim(self) -> int:
        """Vector length."""
        return int(self.vectors.shape[1])

    def content_hash(self) -> str:
        """sha256 of the symbols, vectors, model record and missing genes: what `save` records and `load` checks."""
        digest = hashlib.sha256()
        digest.update("\0".join(map(str, self.symbols)).encode())
        digest.update(np.ascontiguousarray(self.vectors, dtype="<f4").data)
        model = self.model.model_dump(mode="json") if self.model is not None else None
        digest.update(json.dumps([model, self.missing], sort_keys=True, default=str).encode())
        return digest.hexdigest()

    def save(self, path: str | Path) -> None:
        """Write a parquet file (`symbol` + one list column `vector`, plus its content hash), atomically."""
        path = Path(path)
        if not self.dim:
            raise EmbeddingError(f"embedding file '{path}': nothing to write, the table holds no vectors.")
        table = pa.table({
            "symbol": pa.array(self.symbols.astype(str), pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(self.vectors.ravel(), pa.float32()), self.dim),
        })
        metadata = {_MISSING: json.dumps(self.missing).encode(), _SHA256: self.content_hash().encode()}
        if self.model is not None:
            metadata[_MODEL] = self.model.model_dump_json().encode()
        table = table.replace_schema_metadata(metadata)
        write_atomic(path, lambda part: pq.write_table(table, part))

    @classmethod
    def load(cls, path: str | Path, *, require_hash: bool = False) -> GeneEmbeddings:
        """Read a file written by `save`, checking its content hash when it records one.

        Args:
            path: the parquet file.
            require_hash: refuse a file without a recorded content hash (the embedding cache always writes one).

        Raises:
            EmbeddingError: the file is unreadable, not in this format, or its content does not match its hash.
        """
        if not Path(path).is_file():
            raise EmbeddingError(f"embedding file '{path}': not found; pass a parquet file written by `genebench "
                                 "encode`.")
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise EmbeddingError(f"embedding file '{path}': not a readable parquet file ({exc}).") from exc
        if "symbol" not in table.column_names or "vector" not in table.column_names:
            raise EmbeddingError(
                f"embedding file '{path}': expected columns 'symbol' and 'vector', found {table.column_names}."
            )
        column = table["vector"].combine_chunks()
        if not (pa.types.is_list(column.type) or pa.types.is_fixed_size_list(column.type)
                or pa.types.is_large_list(column.type)):
            raise EmbeddingError(f"embedding file '{path}': expected 'vector' to be a list of numbers, found type "
                                 f"{column.type}.")
        lengths = set(column.value_lengths().to_pylist()) if len(column) else set()
        if len(lengths) > 1 or column.null_count:
            raise EmbeddingError(f"embedding file '{path}': expected every vector to have the same length, found "
                                 f"lengths {sorted(x for x in lengths if x is not None)[:5]}"
                                 f"{' and empty (null) vectors' if column.null_count else ''}.")
        meta = table.schema.metadata or {}
        try:
            vectors = np.asarray(column.flatten().to_numpy(zero_copy_only=False), dtype=np.float32)
            missing = json.loads(meta.get(_MISSING, b"{}"))
        except (ValueError, TypeError, pa.ArrowException) as exc:
            raise EmbeddingError(f"embedding file '{path}': expected numeric vectors and JSON metadata, found "
                                 f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}.") from exc
        if not isinstance(missing, dict):
            raise EmbeddingError(f"embedding file '{path}': expected a JSON object as its missing-genes record.")
        try:
            model = ModelInfo.model_validate_json(meta[_MODEL]) if _MODEL in meta else None
        except ValueError as exc:
            raise EmbeddingError(f"embedding file '{path}': its model record is not a genebench ModelInfo "
                                 f"({str(exc).splitlines()[0]}); write it again with `genebench encode`.") from exc
        symbols = np.asarray(table["symbol"].to_pylist(), dtype=object)
        loaded = cls(symbols=symbols, vectors=vectors.reshape(len(symbols), -1) if len(symbols) else
                     vectors.reshape(0, 0), model=model, missing=missing)
        recorded = meta.get(_SHA256)
        if recorded is None and require_hash:
            raise EmbeddingError(f"embedding file '{path}': no content hash recorded (written by an older genebench "
                                 "or another tool).")
        if recorded is not None and recorded.decode(errors="replace") != loaded.content_hash():
            raise EmbeddingError(f"embedding file '{path}': its content does not match the sha256 recorded when it "
                                 "was written (the file was edited or replaced).")
        return loaded


_MODEL, _MISSING, _SHA256 = b"genebench.model", b"genebench.missing", b"genebench.sha256"
