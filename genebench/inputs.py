"""The input kinds, as data: how a gene becomes model input, which adapter does it, and what a user may set.

`ADAPTERS` is the one list of input kinds. Each entry names its adapter lazily ("module:Class", so torch and
transformers load only when an adapter that needs them is asked for), declares the options a user may set (from
which `genebench run`'s flags and the YAML schema are made), and says what the run needs to know about it as plain
fields (`is_cached`, `reads_descriptions`, `needs_name`), so the run never names an input kind. Adding an input
kind is an adapter module and one entry here.

Examples:
    >>> sorted(ADAPTERS)
    ['bag-of-words', 'description', 'dna', 'paper-bag-of-words', 'precomputed', 'protein', 'random', 'token']
    >>> ADAPTERS["precomputed"].is_cached, ADAPTERS["precomputed"].needs_name
    (False, True)
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any

from genebench.constants import DTYPES, RUNTIMES
from genebench.errors import AdapterError
from genebench.registry import Registry

CACHE = "model_adapters.cache:CachedEncoder"
"""The embedding cache wrapped around every adapter whose entry `is_cached`."""


@dataclass(frozen=True)
class Option:
    """One adapter setting: a keyword of the adapter's `__init__`, a CLI flag and a key under `adapter:` in YAML.

    Attributes:
        name: the keyword (and YAML key).
        help: one line for `--help`.
        type: str, int, float or bool (a bool is a flag that takes no value).
        choices: the values allowed, when they are a closed set.
        flag: the CLI flag, when not `--<name with dashes>`.
        is_file: the value is a local file, recorded in results by name, size and sha256 (never its path).
    """

    name: str
    help: str
    type: type = str
    choices: tuple[str, ...] | None = None
    flag: str | None = None
    is_file: bool = False

    @property
    def cli_flag(self) -> str:
        """`--description-source` for `source`, else `--<name with dashes>`."""
        return self.flag or "--" + self.name.replace("_", "-")


POOLING = Option("pooling", "token pooling: mean or cls (encoders), input or mean/cls (token input)")
DEVICE = Option("device", "cuda, mps or cpu (default: the best available)")
DTYPE = Option("dtype", "precision of the forward pass (default auto: bf16 on a GPU and on a CPU with native bf16 "
                        "instructions, else float32; recorded with every result)",
               choices=DTYPES)
BATCH_SIZE = Option("batch_size", "most inputs per forward pass (description inputs fill each batch up to a "
                    "token budget)", type=int)
TRUST_REMOTE_CODE = Option("trust_remote_code", "allow the model's own Python code to run (needed by e.g. "
                                                "DNABERT-2, HyenaDNA)", type=bool)
MAX_LENGTH = Option("max_length", "tokens per chunk of a long sequence (default: the model's context)", type=int)
HF = (POOLING, DEVICE, DTYPE, BATCH_SIZE, TRUST_REMOTE_CODE)
"""The options every Hugging Face encoder takes (the model revision is `--model-revision`, for every input kind)."""

SOURCE = Option("source", "description text: bundled RefSeq summaries (default), live NCBI, HGNC names, or a CSV",
                choices=("refseq", "ncbi", "hgnc", "csv"), flag="--description-source")
DESCRIPTIONS = Option("descriptions", "description CSV (symbol,description) for source csv", is_file=True)
RUNTIME = Option("runtime", "description input: where the text model runs: torch, or numpy (BERT "
                            "sentence-transformers models such as all-MiniLM-L6-v2, float32 on the CPU, no torch "
                            "needed); default auto: torch when installed, else numpy", choices=RUNTIMES)
MAX_FEATURES = Option("max_features", "bag-of-words: vocabulary size (default 1024)", type=int)


@dataclass(frozen=True)
class AdapterEntry:
    """One input kind: its adapter ("module:Class", imported on first use), options, defaults and needs.

    Attributes:
        target: "module:Class" of the adapter.
        options: the settings a user may give (a `--flag` and a YAML `adapter:` key each).
        default_model: the model used when none is given.
        default_name: the id results are filed under when no `--name` is given, formatted with the settings
            (e.g. "genebench/random-{dim}"); None: the model's Hub id.
        is_cached: its vectors are kept in the embedding cache (`CACHE`); a table is read as it is.
        reads_descriptions: it reads gene descriptions (the bundled RefSeq summaries unless told otherwise), and
            the run reports how many genes got a full one (`describe`).
        needs_name: its model is a local file, so results need `--name` to be filed under.
        describe: "module:function" giving (encoder, embeddings, genes) -> description counts, for
            `reads_descriptions` kinds.
    """

    target: str
    options: tuple[Option, ...] = ()
    default_model: str | None = None
    default_name: str | None = None
    is_cached: bool = True
    reads_descriptions: bool = False
    needs_name: bool = False
    describe: str | None = None


_DESCRIBE = "model_adapters:description_coverage"

ADAPTERS: Registry[AdapterEntry] = Registry("input kind", {
    "token": AdapterEntry("model_adapters.token:TokenAdapter", (
        Option("vocabulary", "token input: gene -> token id dictionary (pickle or json)", is_file=True), *HF)),
    "description": AdapterEntry("model_adapters.description:DescriptionAdapter", (SOURCE, DESCRIPTIONS, *HF, RUNTIME),
                                default_model="sentence-transformers/all-MiniLM-L6-v2", reads_descriptions=True,
                                describe=_DESCRIBE),
    "dna": AdapterEntry("model_adapters.dna:DnaAdapter", (
        Option("region", "dna input: genomic region or coding sequence", choices=("gene", "cds")),
        Option("max_bases", "dna input: longest sequence read per gene (bases)", type=int), *HF, MAX_LENGTH)),
    "protein": AdapterEntry("model_adapters.protein:ProteinAdapter", (*HF, MAX_LENGTH)),
    "precomputed": AdapterEntry("model_adapters.precomputed:PrecomputedAdapter", (
        Option("index", "precomputed .npy: a file of symbols, one per row", is_file=True),
        Option("symbol_column", "precomputed table: the column holding gene symbols"),
        Option("split", "precomputed Hugging Face dataset: the split to read (default train)")),
        is_cached=False, needs_name=True),
    "bag-of-words": AdapterEntry("model_adapters.baselines:BagOfWordsAdapter", (
        SOURCE, DESCRIPTIONS, MAX_FEATURES),
        default_model="bag-of-words", default_name="genebench/bag-of-words", reads_descriptions=True,
        describe=_DESCRIBE),
    "paper-bag-of-words": AdapterEntry("model_adapters.reproduction:PaperBagOfWordsAdapter", (
        SOURCE, DESCRIPTIONS, MAX_FEATURES),
        default_model="paper-bag-of-words", default_name="genebench/paper-bag-of-words", reads_descriptions=True,
        describe=_DESCRIBE),
    "random": AdapterEntry("model_adapters.baselines:RandomAdapter", (
        Option("dim", "random: vector length (default 256)", type=int),
        Option("seed", "random: the seed fixing each gene's vector (default 0)", type=int)),
        default_model="random", default_name="genebench/random-{dim}"),
}, error=AdapterError, listing="Pass --input with one of: token, description, dna, protein, precomputed, "
                               "bag-of-words, paper-bag-of-words (the reference's, to reproduce "
                               "the paper, not to measure a model), random.")
"""Input kind -> its adapter, options and defaults: the one list `--input`, the YAML schema and results use."""


def load_target(target: str) -> Any:
    """The object a "module:object" string names, imported now."""
    module, attribute = target.split(":")
    return getattr(importlib.import_module(module), attribute)


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


def get_adapter(input_kind: str, model: str | None = None, **settings: Any):
    """Build the adapter for one input kind (a `model_adapters.GeneEncoder`); nothing is loaded until its first
    `encode`.

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
