"""The embedding cache: a wrapper that encodes each gene once per (model, revision, input, pooling, source).

The cache is one plain parquet file in `GeneEmbeddings`' format, at
`<cache_dir>/embeddings/<org__model>/<input>-<key>.parquet`, so a user can share it or load it with
`PrecomputedAdapter`. Genes are encoded in chunks and the file is rewritten atomically after each, so an
interrupted run resumes from what is cached. An adapter with an `encoding_order(symbols)` method has its genes
encoded in that order (descriptions: longest first, so the batches of every chunk pad little). Genes an
adapter could not encode are cached as missing too. A corrupt or foreign file is reported with a warning and
rebuilt. Rows are stored sorted by gene, so the file does not depend on the order chunks finished in: a
`ChunkEngine` (Ray, `--engine ray`) encodes the same chunks elsewhere and hands them back in any order.
Each file records a sha256 of its content, checked on every read: an edited or replaced file is reported and
rebuilt, never used.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from genebench.atomic import TMP_SUFFIX
from genebench.constants import CHUNK_SIZE, check_cache_path
from genebench.constants import cache_dir as default_cache_dir
from genebench.embeddings import GeneEmbeddings
from genebench.errors import EmbeddingError
from genebench.model_info import ModelInfo
from genebench.progress import progress, work_shares
from genebench.results import model_dir_name
from model_adapters.base import GeneEncoder

logger = logging.getLogger(__name__)


class ChunkEngine(Protocol):
    """Encodes genes somewhere else, e.g. on a Ray cluster (`genebench.distributed.RayEngine`), `chunk_size`
    genes at a time."""

    chunk_size: int

    def encode_chunks(self, encoder: GeneEncoder, symbols: Sequence[str],
                      chunk_size: int) -> Iterator[tuple[list[str], GeneEmbeddings]]:
        """(genes settled, their `GeneEmbeddings`) for each chunk of `chunk_size` genes, in any order."""
        ...


def cache_path(meta: ModelInfo, cache_dir: str | Path | None = None) -> Path:
    """Where the cache file of an adapter lives."""
    root = Path(cache_dir) if cache_dir else default_cache_dir()
    return root / "embeddings" / model_dir_name(meta.id) / f"{meta.input}-{meta.keyed().cache_key}.parquet"


STALE_TMP_SECONDS = 6 * 3600
"""A temporary cache file older than this is what a killed writer left behind (a live write takes minutes)."""


def remove_stale_tmp(folder: Path, *, older_than: float = STALE_TMP_SECONDS) -> list[Path]:
    """Remove the temporary files (`.<name>.*.tmp`) that killed writers left in `folder`; return those removed."""
    cutoff = time.time() - older_than
    removed = []
    for path in folder.glob(f".*{TMP_SUFFIX}") if folder.is_dir() else ():
        try:
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed.append(path)
        except OSError:  # another process removed or replaced it meanwhile
            continue
    if removed:
        logger.info("embedding cache %s: removed %d temporary files left by interrupted writes", folder, len(removed))
    return removed


def _merge_notes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Counts add up across chunks, and the padding share follows them; anything else takes the newest value."""
    merged = dict(old)
    for key, value in new.items():
        is_count = isinstance(value, int) and not isinstance(value, bool) and key.startswith("n_")
        merged[key] = merged.get(key, 0) + value if is_count and isinstance(merged.get(key), int) else value
    if "padding" in new and "padding" in old:
        merged["padding"] = round(merged["n_padding_tokens"] / (merged["n_tokens"] + merged["n_padding_tokens"]), 4)
    return merged


class CachedEncoder:
    """Wrap any `GeneEncoder` so each gene is encoded once and progress survives interruptions.

    Args:
        encoder: the adapter to wrap.
        cache_dir: cache root (default: `genebench.constants.cache_dir()`).
        chunk_size: genes encoded between two writes of the cache file (default: the engine's, else
            `CHUNK_SIZE`).
        engine: where the genes are encoded (a `genebench.distributed.RayEngine`); None encodes here.

    Examples:
        >>> cached = CachedEncoder(RandomAdapter(hgnc=hgnc), cache_dir=tmp)  # doctest: +SKIP
        >>> cached.encode(["TP53"]).vectors.shape  # doctest: +SKIP
        (1, 256)
    """

    def __init__(self, encoder: GeneEncoder, *, cache_dir: str | Path | None = None, chunk_size: int | None = None,
                 engine: ChunkEngine | None = None) -> None:
        self.encoder = encoder
        self.cache_dir = cache_dir
        self.chunk_size = chunk_size or (engine.chunk_size if engine is not None else CHUNK_SIZE)
        self.engine = engine

    @property
    def meta(self) -> ModelInfo:
        """The wrapped adapter's record."""
        return self.encoder.meta

    @property
    def path(self) -> Path:
        """The cache file."""
        return cache_path(self.meta, self.cache_dir)

    def load(self) -> GeneEmbeddings | None:
        """The cache file's contents, or None when absent, corrupt or written for another key.

        Raises:
            OSError: a folder stands where the file should be, or a file where one of its folders should be.
        """
        path = self.path
        check_cache_path(path, "embedding cache", "the cache's parquet file")
        remove_stale_tmp(path.parent)
        if not path.exists():
            return None
        try:
            stored = GeneEmbeddings.load(path, require_hash=True)
        except EmbeddingError as exc:
            warnings.warn(f"embedding cache '{path}' is corrupt ({exc}); its genes will be re-encoded and the file "
                          "rewritten.", stacklevel=2)
            return None
        if stored.model is None or stored.model.cache_key != self.meta.keyed().cache_key:
            found = stored.model.cache_key if stored.model is not None else None
            warnings.warn(f"embedding cache '{path}' was written for another model or setting (key {found!r}); its "
                          "genes will be re-encoded.", stacklevel=2)
            return None
        return stored

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Vectors for `symbols`, encoding only genes the cache holds neither a vector nor a reason for."""
        distinct = list(dict.fromkeys(symbols))
        stored = self.load()
        rows: dict[str, np.ndarray] = {}
        missing: dict[str, list[str]] = {}
        model = self.meta.keyed()
        if stored is not None:
            rows = dict(zip(stored.symbols, stored.vectors))
            missing = {reason: list(genes) for reason, genes in stored.missing.items()}
            model = stored.model
        settled = set(rows) | {s for genes in missing.values() for s in genes}
        todo = [s for s in distinct if s not in settled]
        if hasattr(self.encoder, "encoding_order"):
            todo = self.encoder.encoding_order(todo)
        logger.info("embedding cache %s: %d genes cached, %d to encode", self.path, len(distinct) - len(todo),
                    len(todo))
        weighted = hasattr(self.encoder, "encoding_cost")  # progress and ETA in what encoding costs, not genes
        cost = dict(zip(todo, self.encoder.encoding_cost(todo) if weighted and todo else [1] * len(todo)))
        with progress(sum(cost.values()), f"encoding with {self.meta.id}", "character" if weighted else "gene",
                      enabled=bool(todo)) as overall:
            for part in self._encode_chunks(todo, cost, overall):
                rows.update(zip(part.symbols, part.vectors))
                for reason, genes in part.missing.items():
                    missing[reason] = list(dict.fromkeys([*missing.get(reason, []), *genes]))
                model = part.model.model_copy(update={"notes": _merge_notes(model.notes, part.model.notes)})
                self._save(rows, missing, model)
        genes = [s for s in distinct if s in rows]
        wanted = set(distinct)
        dim = len(next(iter(rows.values()))) if rows else (self.meta.dim or 0)
        return GeneEmbeddings(
            symbols=np.asarray(genes, dtype=object),
            vectors=np.stack([rows[s] for s in genes]) if genes else np.zeros((0, dim), np.float32),
            model=model,
            missing={r: [s for s in g if s in wanted] for r, g in missing.items() if any(s in wanted for s in g)},
        )

    def _encode_chunks(self, todo: list[str], cost: dict[str, int], overall: Any) -> Iterator[GeneEmbeddings]:
        """Each chunk's encoding, here or on the engine (whose chunks come in any order), moving `overall` by the
        chunk's `cost`: batch by batch when encoded here (`work_shares`), so the bar moves within seconds."""
        if self.engine is not None:
            for settled_now, part in self.engine.encode_chunks(self.encoder, todo, self.chunk_size):
                overall.update(sum(cost.get(symbol, 0) for symbol in settled_now))
                yield part
            return
        for start in range(0, len(todo), self.chunk_size):
            chunk = todo[start:start + self.chunk_size]
            with work_shares(overall, sum(cost[symbol] for symbol in chunk)):
                part = self.encoder.encode(chunk)
            yield part

    def _save(self, rows: dict[str, np.ndarray], missing: dict[str, list[str]], model: ModelInfo) -> None:
        """Write the cache file, its rows sorted by gene: the same genes give the same file in any encoding order."""
        symbols = sorted(rows)
        dim = len(rows[symbols[0]]) if symbols else (self.meta.dim or 0)
        vectors = np.stack([rows[s] for s in symbols]) if symbols else np.zeros((0, dim), np.float32)
        GeneEmbeddings(symbols=np.asarray(symbols, dtype=object), vectors=vectors, model=model,
                       missing=missing).save(self.path)
