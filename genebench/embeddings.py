"""Gene embeddings: the one thing every adapter produces and the probe engine consumes."""

from __future__ import annotations

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

    def save(self, path: str | Path) -> None:
        """Write a parquet file (`symbol` + one list column `vector`), atomically."""
        path = Path(path)
        table = pa.table({
            "symbol": pa.array(self.symbols.astype(str), pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(self.vectors.ravel(), pa.float32()), self.dim),
        })
        metadata = {b"genebench.missing": json.dumps(self.missing).encode()}
        if self.model is not None:
            metadata[b"genebench.model"] = self.model.model_dump_json().encode()
        sink = pa.BufferOutputStream()
        pq.write_table(table.replace_schema_metadata(metadata), sink)
        write_atomic(path, sink.getvalue().to_pybytes())

    @classmethod
    def load(cls, path: str | Path) -> GeneEmbeddings:
        """Read a file written by `save`."""
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowInvalid) as exc:
            raise EmbeddingError(f"embedding file '{path}': not a readable parquet file ({exc}).") from exc
        if "symbol" not in table.column_names or "vector" not in table.column_names:
            raise EmbeddingError(
                f"embedding file '{path}': expected columns 'symbol' and 'vector', found {table.column_names}."
            )
        vectors = np.asarray(table["vector"].combine_chunks().flatten().to_numpy(), dtype=np.float32)
        symbols = np.asarray(table["symbol"].to_pylist(), dtype=object)
        meta = table.schema.metadata or {}
        try:
            model = ModelInfo.model_validate_json(meta[b"genebench.model"]) if b"genebench.model" in meta else None
        except ValueError as exc:
            raise EmbeddingError(f"embedding file '{path}': its model record is not a genebench ModelInfo "
                                 f"({str(exc).splitlines()[0]}); write it again with `genebench encode`.") from exc
        return cls(
            symbols=symbols,
            vectors=vectors.reshape(len(symbols), -1) if len(symbols) else vectors.reshape(0, 0),
            model=model,
            missing=json.loads(meta.get(b"genebench.missing", b"{}")),
        )
