"""What every adapter is: a `ModelInfo` record (`meta`) plus one `encode(symbols) -> GeneEmbeddings` method.

`__init__` of an adapter only stores its settings; weights, tokenizers and sources load on first `encode`.
Adapters return only the genes they could encode and say why each other gene is missing: no gene ever
gets a random vector (the seeded random baseline is the one, explicit, exception).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from genebench.embeddings import GeneEmbeddings
from genebench.errors import AdapterError  # noqa: F401 (the adapters and their callers import it from here)
from genebench.hashing import file_sha256
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
    approved = set(hgnc["symbol"].tolist())
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


@dataclass(frozen=True)
class BatchPlan:
    """Batches of input indices, longest inputs first, and what they cost in tokens.

    Attributes:
        batches: index arrays into the inputs; each batch's inputs are padded to its first (longest) one.
        n_tokens: the inputs' tokens.
        n_computed: tokens the batches compute, padding included.
    """

    batches: list[np.ndarray]
    n_tokens: int
    n_computed: int

    @property
    def padding(self) -> float:
        """The share of computed tokens that are padding."""
        return 1 - self.n_tokens / self.n_computed if self.n_computed else 0.0

    def note(self, notes: dict[str, Any]) -> None:
        """Record the plan's tokens in an encoder's `notes` (per call: the cache adds calls up)."""
        notes.update(n_tokens=self.n_tokens, n_padding_tokens=self.n_computed - self.n_tokens,
                     padding=round(self.padding, 4))


def plan_batches(lengths: Sequence[int], max_texts: int, max_tokens: int | None = None) -> BatchPlan:
    """Sort inputs by token count, longest first (so memory errors come early), and fill each batch up to
    `max_tokens` tokens, padding included, and at most `max_texts` inputs.

    Examples:
        >>> plan = plan_batches([3, 10, 4, 9], max_texts=8, max_tokens=20)
        >>> [b.tolist() for b in plan.batches], plan.n_tokens, plan.n_computed
        ([[1, 3], [2, 0]], 26, 28)
    """
    sizes = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-sizes, kind="stable")
    batches, computed, start = [], 0, 0
    while start < len(order):
        width = int(sizes[order[start]])
        count = min(max_texts, max(1, max_tokens // max(width, 1))) if max_tokens else max_texts
        batches.append(order[start:start + count])
        computed += width * len(batches[-1])
        start += count
    return BatchPlan(batches, int(sizes.sum()), computed)


def note_truncated(notes: dict[str, Any], model_id: str, n_truncated: int, limit: int) -> None:
    """Record in an encoder's `notes` how many texts of one call reached the model's `max_seq_length` (the cache adds
    calls up), and say so when any did."""
    notes["n_truncated"] = n_truncated
    if n_truncated:
        logger.info("%s: %d texts reached max_seq_length=%d and were truncated", model_id, n_truncated, limit)
