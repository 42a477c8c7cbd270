"""Model adapters: turn current HGNC gene symbols into vectors, one input kind per module.

The input kinds themselves are data in the core (`genebench.inputs.ADAPTERS`: each entry names its adapter here
lazily, as "module:Class"); this package holds the adapters and re-exports that table for them.

Examples:
    >>> sorted(ADAPTERS)
    ['bag-of-words', 'description', 'dna', 'precomputed', 'protein', 'random', 'token']
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from genebench.embeddings import GeneEmbeddings
from genebench.errors import AdapterError
from genebench.inputs import ADAPTERS, AdapterEntry, Option, adapter_settings, get_adapter, options
from model_adapters.base import UNKNOWN_SYMBOL, GeneEncoder
from model_adapters.cache import CachedEncoder

logger = logging.getLogger(__name__)


def description_coverage(encoder: GeneEncoder, embeddings: GeneEmbeddings, genes: Sequence[str]) -> dict[str, int]:
    """How many of the HGNC genes asked for got a full description, their symbol and name only, or no text, from
    the description source of `encoder` (cached or not): `describe` of the description input kinds. Warns when
    under half are full."""
    source = (encoder.encoder if isinstance(encoder, CachedEncoder) else encoder).source
    unknown = set(embeddings.missing.get(UNKNOWN_SYMBOL, ()))
    counts = source.coverage([gene for gene in genes if gene not in unknown])
    total = sum(counts.values())
    if counts["full"] < total / 2:
        logger.warning("description source '%s' describes only %d of %d genes in full (%.1f%%); the others are "
                       "encoded from their symbol and name only (%d) or not at all (%d), so the scores say little "
                       "about the descriptions.", source.source, counts["full"], total,
                       100 * counts["full"] / max(total, 1), counts["name_only"], counts["missing"])
    return counts


__all__ = ["ADAPTERS", "AdapterEntry", "AdapterError", "GeneEncoder", "Option", "adapter_settings",
           "description_coverage", "get_adapter", "options"]
