"""Model adapters: turn current HGNC gene symbols into vectors, one input kind per module.

`ADAPTERS` is the one list of input kinds: each entry names its adapter lazily ("module:Class", so torch and
transformers load only when an adapter that needs them is asked for) and declares the options a user may set,
from which `genebench run`'s flags and the YAML schema are made. Adding an input kind is an adapter module
and one entry here.

Examples:
    >>> sorted(ADAPTERS)
    ['bag-of-words', 'description', 'dna', 'precomputed', 'protein', 'random', 'token']
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from genebench.registry import Registry
from model_adapters.base import AdapterError, GeneEncoder
from model_adapters.options import DESCRIPTIONS, HF, MAX_LENGTH, RUNTIME, SOURCE, Option


@dataclass(frozen=True)
class AdapterEntry:
    """One input kind: its adapter ("module:Class", imported on first use), options and defaults.

    Attributes:
        target: "module:Class" of the adapter.
        options: the settings a user may give (a `--flag` and a YAML `adapter:` key each).
        default_model: the model used when none is given.
        default_name: the id results are filed under when no `--name` is given, formatted with the settings
            (e.g. "genebench/random-{dim}"); None: the model's Hub id.
    """

    target: str
    options: tuple[Option, ...] = ()
    default_model: str | None = None
    default_name: str | None = None


ADAPTERS: Registry[AdapterEntry] = Registry("input kind", {
    "token": AdapterEntry("model_adapters.token:TokenAdapter", (
        Option("vocabulary", "token input: gene -> token id dictionary (pickle or json)", is_file=True), *HF)),
    "description": AdapterEntry("model_adapters.description:DescriptionAdapter", (SOURCE, DESCRIPTIONS, *HF, RUNTIME),
                                default_model="sentence-transformers/all-MiniLM-L6-v2"),
    "dna": AdapterEntry("model_adapters.dna:DnaAdapter", (
        Option("region", "dna input: genomic region or coding sequence", choices=("gene", "cds")),
        Option("max_bases", "dna input: longest sequence read per gene (bases)", type=int), *HF, MAX_LENGTH)),
    "protein": AdapterEntry("model_adapters.protein:ProteinAdapter", (*HF, MAX_LENGTH)),
    "precomputed": AdapterEntry("model_adapters.precomputed:PrecomputedAdapter", (
        Option("index", "precomputed .npy: a file of symbols, one per row", is_file=True),
        Option("symbol_column", "precomputed table: the column holding gene symbols"),
        Option("split", "precomputed Hugging Face dataset: the split to read (default train)"))),
    "bag-of-words": AdapterEntry("model_adapters.baselines:BagOfWordsAdapter", (
        SOURCE, DESCRIPTIONS, Option("max_features", "bag-of-words: vocabulary size (default 1024)", type=int)),
        default_model="bag-of-words", default_name="genebench/bag-of-words"),
    "random": AdapterEntry("model_adapters.baselines:RandomAdapter", (
        Option("dim", "random: vector length (default 256)", type=int),
        Option("seed", "random: the seed fixing each gene's vector (default 0)", type=int)),
        default_model="random", default_name="genebench/random-{dim}"),
}, error=AdapterError, listing="Pass --input with one of: token, description, dna, protein, precomputed, "
                               "bag-of-words, random.")
"""Input kind -> its adapter, options and defaults: the one list `--input`, the YAML schema and results use."""


def options() -> dict[str, Option]:
    """Every distinct option over all input kinds, by name (an option means the same for every kind)."""
    return {option.name: option for entry in ADAPTERS.values() for option in entry.options}


def adapter_settings(input_kind: str) -> dict[str, Any]:
    """The keyword settings an input kind's adapter takes (besides `model` and `hgnc`) and their defaults,
    following `**settings` up to the base class that receives them.

    Raises:
        AdapterError: `input_kind` is not one of `ADAPTERS`.
    """
    names: dict[str, Any] = {}
    for cls in ADAPTERS.load(input_kind).__mro__:
        if "__init__" not in vars(cls):
            continue
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]  # without self
        names |= {p.name: p.default for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                  and p.name not in ("model", "hgnc", *names)}
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
    adapter_class = ADAPTERS.load(input_kind)
    accepted = adapter_settings(input_kind)
    foreign = sorted(set(settings) - set(accepted) - {"hgnc"})
    if foreign:
        raise AdapterError(f"input kind '{input_kind}' has no setting {', '.join(map(repr, foreign))}; its settings "
                           f"are {', '.join(accepted) or 'none'}. Drop the option (--{foreign[0].replace('_', '-')}).")
    return adapter_class(model, **settings) if model is not None else adapter_class(**settings)


__all__ = ["ADAPTERS", "AdapterEntry", "AdapterError", "GeneEncoder", "Option", "adapter_settings", "get_adapter",
           "options"]
