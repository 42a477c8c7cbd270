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

from model_adapters.base import AdapterError, GeneEncoder

ADAPTERS: dict[str, str] = {
    "token": "model_adapters.token:TokenAdapter",
    "description": "model_adapters.description:DescriptionAdapter",
    "dna": "model_adapters.dna:DnaAdapter",
    "protein": "model_adapters.protein:ProteinAdapter",
    "precomputed": "model_adapters.precomputed:PrecomputedAdapter",
    "bag-of-words": "model_adapters.baselines:BagOfWordsAdapter",
    "random": "model_adapters.baselines:RandomAdapter",
}


def _adapter_class(input_kind: str) -> type:
    if input_kind not in ADAPTERS:
        close = difflib.get_close_matches(input_kind, ADAPTERS, n=3)
        hint = f" Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""
        raise AdapterError(f"input kind '{input_kind}' is not known.{hint} Valid kinds: {', '.join(ADAPTERS)}; "
                           "pass --input with one of them.")
    module_name, class_name = ADAPTERS[input_kind].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def adapter_settings(input_kind: str) -> list[str]:
    """The keyword settings an input kind's adapter takes (besides `model` and `hgnc`), following
    `**settings` up to the base class that receives them.

    Raises:
        AdapterError: `input_kind` is not one of `ADAPTERS`.
    """
    names: list[str] = []
    for cls in _adapter_class(input_kind).__mro__:
        if "__init__" not in vars(cls):
            continue
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]  # without self
        names += [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                  and p.name not in ("model", "hgnc", *names)]
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return names


def get_adapter(input_kind: str, model: str | None = None, **settings: Any) -> GeneEncoder:
    """Build the adapter for one input kind; nothing is loaded until its first `encode`.

    Args:
        input_kind: one of `ADAPTERS`.
        model: Hub id, local folder, or table path (precomputed); None takes the adapter's default.
        **settings: the adapter's keyword arguments (always `hgnc=`, the HGNC table).

    Raises:
        AdapterError: `input_kind` is not one of `ADAPTERS`, or a setting does not apply to it.
    """
    adapter_class = _adapter_class(input_kind)
    accepted = adapter_settings(input_kind)
    foreign = sorted(set(settings) - set(accepted) - {"hgnc"})
    if foreign:
        raise AdapterError(f"input kind '{input_kind}' has no setting {', '.join(map(repr, foreign))}; its settings "
                           f"are {', '.join(accepted) or 'none'}. Drop the option (--{foreign[0].replace('_', '-')}).")
    return adapter_class(model, **settings) if model is not None else adapter_class(**settings)


__all__ = ["ADAPTERS", "AdapterError", "GeneEncoder", "adapter_settings", "get_adapter"]
