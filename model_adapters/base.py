"""What every adapter is: a `ModelInfo` record (`meta`) plus one `encode(symbols) -> GeneEmbeddings` method.

`__init__` of an adapter only stores its settings; weights, tokenizers and sources load on first `encode`.
Adapters return only the genes they could encode and say why each other gene is missing: no gene ever
gets a random vector (the seeded random baseline is the one, explicit, exception).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from genebench.data import file_sha256
from genebench.embeddings import GeneEmbeddings
from genebench.errors import GenebenchError
from genebench.model_info import ModelInfo

Pooling = Literal["mean", "cls"]
"""How a plain encoder pools token states into one vector: their mean, or the first (CLS) token."""

logger = logging.getLogger(__name__)

# Reasons used as keys of `GeneEmbeddings.missing`.
UNKNOWN_SYMBOL = "unknown_symbol"
NO_DESCRIPTION = "no_description"
NO_SEQUENCE = "no_sequence"
NOT_IN_VOCABULARY = "not_in_vocabulary"
NOT_IN_TABLE = "not_in_table"
NON_FINITE = "non_finite_vector"


class AdapterError(GenebenchError, ValueError):
    """An adapter setting, model or tokenizer that cannot be used as given."""


@runtime_checkable
class GeneEncoder(Protocol):
    """Anything that turns current HGNC symbols into a `GeneEmbeddings` table.

    genebench's adapters also expose `meta` (a `ModelInfo`), which `CachedEncoder` keys on. It is not
    part of the runtime check: on Python < 3.12 `isinstance` would evaluate it, and some adapters must
    read their source or vocabulary to fill it in.
    """

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Encode `symbols`, returning vectors for those it can and `missing` for the rest."""
        ...


def split_known(symbols: Sequence[str], hgnc: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Split distinct `symbols` into (current HGNC symbols, unknown ones), keeping input order."""
    approved = set(hgnc["symbol"])
    distinct = list(dict.fromkeys(symbols))
    known = [s for s in distinct if s in approved]
    unknown = [s for s in distinct if s not in approved]
    if unknown:
        logger.warning("%d of %d symbols are not current HGNC symbols and get no vector: %s",
                       len(unknown), len(distinct), ", ".join(unknown[:10]))
    return known, unknown


def make_embeddings(
    meta: ModelInfo,
    symbols: Sequence[str],
    vectors: np.ndarray | Sequence[np.ndarray],
    missing: dict[str, list[str]],
    *,
    n_parameters: int | None = None,
    **notes: Any,
) -> GeneEmbeddings:
    """Assemble a `GeneEmbeddings` from an adapter's output, logging what is missing.

    Args:
        meta: the adapter's record; returned as the table's `model`, keyed, with its dimension, size and counts.
        symbols: encoded genes, shape (n_genes,).
        vectors: shape (n_genes, n_dims), or a list of n_genes vectors.
        missing: reason -> symbols; empty reasons are dropped.
        n_parameters: the model's size (the leaderboard's size filter).
        **notes: what encoding did (genes renamed, inputs cut into chunks, ...), recorded in `model.notes`.
    """
    missing = {reason: list(genes) for reason, genes in missing.items() if genes}
    for reason, genes in missing.items():
        logger.info("%s: %d genes without a vector (%s), e.g. %s", meta.id, len(genes), reason, genes[:5])
    dim = meta.dim or 0
    array = np.asarray(vectors, dtype=np.float32) if len(symbols) else np.zeros((0, dim), np.float32)
    update: dict[str, Any] = {"dim": int(array.shape[1]) if array.ndim == 2 else dim,
                              "notes": {**meta.notes, **notes}}
    if n_parameters is not None:
        update["n_parameters"] = int(n_parameters)
    return GeneEmbeddings(symbols=np.asarray(list(symbols), dtype=object), vectors=array,
                          model=meta.keyed().model_copy(update=update), missing=missing)


def file_version(path: str | Path) -> str:
    """`<name>@<sha256 prefix>`: the version stamp of a local source file."""
    path = Path(path)
    return f"{path.name}@{file_sha256(path)[:12]}"


def length_batches(lengths: Sequence[int], batch_size: int) -> Iterator[np.ndarray]:
    """Indices of inputs in batches of similar length, longest first (so memory errors come early)."""
    order = np.argsort(-np.asarray(lengths), kind="stable")
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


def note_truncated(notes: dict[str, Any], model_id: str, n_truncated: int, limit: int) -> None:
    """Record in an encoder's `notes` how many texts of one call reached the model's `max_seq_length` (the cache adds
    calls up), and say so when any did."""
    notes["n_truncated"] = n_truncated
    if n_truncated:
        logger.info("%s: %d texts reached max_seq_length=%d and were truncated", model_id, n_truncated, limit)
