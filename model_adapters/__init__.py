"""Model adapters: turn current HGNC gene symbols into vectors, one input kind per module.

Adapters register lazily as "module:Class" strings, so torch and transformers load only when an adapter
that needs them is asked for.

Examples:
    >>> sorted(ADAPTERS)
    ['bag-of-words', 'description', 'dna', 'precomputed', 'protein', 'random', 'token']
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from typing import Any

from model_adapters.base import AdapterError, AdapterMeta, GeneEncoder

ADAPTERS: dict[str, str] = {
    "token": "model_adapters.token:TokenAdapter",
    "description": "model_adapters.description:DescriptionAdapter",
    "dna": "model_adapters.dna:DnaAdapter",
    "protein": "model_adapters.protein:ProteinAdapter",
    "precomputed": "model_adapters.precomputed:PrecomputedAdapter",
    "bag-of-words": "model_adapters.baselines:BagOfWordsAdapter",
    "random": "model_adapters.baselines:RandomAdapter",
}


def get_adapter(input_kind: str, model: str | None = None, **settings: Any) -> GeneEncoder:
    """Build the adapter for one input kind; nothing is loaded until its first `encode`.

    Args:
        input_kind: one of `ADAPTERS`.
        model: Hub id, local folder, or table path (precomputed); None takes the adapter's default.
        **settings: the adapter's keyword arguments (always `hgnc=`, the HGNC table).

    Raises:
        AdapterError: `input_kind` is not one of `ADAPTERS`, or a setting does not apply to it.
    """
    if input_kind not in ADAPTERS:
        close = difflib.get_close_matches(input_kind, ADAPTERS, n=3)
        hint = f" Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""
        raise AdapterError(f"input kind '{input_kind}' is not known.{hint} Valid kinds: {', '.join(ADAPTERS)}; "
                           "pass --input with one of them.")
    module_name, class_name = ADAPTERS[input_kind].split(":")
    adapter_class = getattr(importlib.import_module(module_name), class_name)
    accepted = [name for name in inspect.signature(adapter_class).parameters if name not in ("model", "hgnc")]
    foreign = sorted(set(settings) - set(accepted) - {"hgnc"})
    if foreign:
        raise AdapterError(f"input kind '{input_kind}' has no setting {', '.join(map(repr, foreign))}; its settings "
                           f"are {', '.join(accepted) or 'none'}. Drop the option (--{foreign[0].replace('_', '-')}).")
    return adapter_class(model, **settings) if model is not None else adapter_class(**settings)


__all__ = ["ADAPTERS", "AdapterError", "AdapterMeta", "GeneEncoder", "get_adapter"]
