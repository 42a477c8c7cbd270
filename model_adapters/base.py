"""What every adapter is: an `AdapterMeta` record plus one `encode(symbols) -> GeneEmbeddings` method.

`__init__` of an adapter only stores its settings; weights, tokenizers and sources load on first `encode`.
Adapters return only the genes they could encode and say why each other gene is missing: no gene ever
gets a random vector (the seeded random baseline is the one, explicit, exception).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from genebench.data import file_sha256
from genebench.embeddings import GeneEmbeddings
from genebench.errors import GenebenchError

logger = logging.getLogger(__name__)

InputKind = Literal["token", "description", "dna", "protein", "precomputed", "bag-of-words", "random"]
"""How a gene is turned into the model's input."""

# Reasons used as keys of `GeneEmbeddings.missing`.
UNKNOWN_SYMBOL = "unknown_symbol"
NO_DESCRIPTION = "no_description"
NO_SEQUENCE = "no_sequence"
NOT_IN_VOCABULARY = "not_in_vocabulary"
NOT_IN_TABLE = "not_in_table"


class AdapterError(GenebenchError, ValueError):
    """An adapter setting, model or tokenizer that cannot be used as given."""


class AdapterMeta(BaseModel):
    """Where an adapter's vectors come from: everything the embedding cache keys on.

    Attributes:
        model_id: Hub id or local path of the model (or table, for precomputed inputs).
        revision: commit hash, version or file hash of the weights; "main" when unpinned.
        input: how a gene is turned into the model's input.
        pooling: how token vectors become one gene vector ("mean", "cls", "input", "none").
        dim: vector length when known before encoding.
        license: licence of the weights when known.
        trust_remote_code: whether the model's own Python code may run.
        source_version: version of the description or sequence source ("" when there is none).
        settings: any other setting that changes the vectors (region, vocabulary, max length, ...).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_id: str
    revision: str = "main"
    input: InputKind
    pooling: str = "none"
    dim: int | None = None
    license: str | None = None
    trust_remote_code: bool = False
    source_version: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)

    def cache_key(self) -> str:
        """A short hash of everything that changes the vectors (not `dim` or `license`)."""
        keyed = self.model_dump(include={"model_id", "revision", "input", "pooling", "source_version", "settings"})
        return hashlib.sha256(json.dumps(keyed, sort_keys=True, default=str).encode()).hexdigest()[:16]


@runtime_checkable
class GeneEncoder(Protocol):
    """Anything that turns current HGNC symbols into a `GeneEmbeddings` table.

    genebench's adapters also expose `meta` (an `AdapterMeta`), which `CachedEncoder` keys on. It is not
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
    meta: AdapterMeta,
    symbols: Sequence[str],
    vectors: np.ndarray | Sequence[np.ndarray],
    missing: dict[str, list[str]],
    *,
    n_parameters: int | None = None,
    **extra: Any,
) -> GeneEmbeddings:
    """Assemble a `GeneEmbeddings` from an adapter's output, logging what is missing.

    Args:
        meta: the adapter's record; stored as the `model` dict with `extra` merged into its settings.
        symbols: encoded genes, shape (n_genes,).
        vectors: shape (n_genes, n_dims), or a list of n_genes vectors.
        missing: reason -> symbols; empty reasons are dropped.
        n_parameters: the model's size, recorded as `model["n_parameters"]` (the leaderboard's size filter).
        **extra: counts or notes to record in `model["settings"]`.
    """
    missing = {reason: list(genes) for reason, genes in missing.items() if genes}
    for reason, genes in missing.items():
        logger.info("%s: %d genes without a vector (%s), e.g. %s", meta.model_id, len(genes), reason, genes[:5])
    dim = meta.dim or 0
    array = np.asarray(vectors, dtype=np.float32) if len(symbols) else np.zeros((0, dim), np.float32)
    model = meta.model_dump()
    model["settings"] = {**model["settings"], **extra}
    model["dim"] = int(array.shape[1]) if array.ndim == 2 else dim
    if n_parameters is not None:
        model["n_parameters"] = int(n_parameters)
    return GeneEmbeddings(symbols=np.asarray(list(symbols), dtype=object), vectors=array, model=model,
                          missing=missing)


def file_version(path: str | Path) -> str:
    """`<name>@<sha256 prefix>`: the version stamp of a local source file."""
    path = Path(path)
    return f"{path.name}@{file_sha256(path)[:12]}"
