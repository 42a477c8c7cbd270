"""What a user may set on an adapter: one `Option` per setting, from which the CLI flags and the YAML schema come.

Each input kind's entry in `model_adapters.ADAPTERS` lists its options; `genebench run` adds one flag per
distinct option and `genebench.pipeline.RunConfig` accepts each under `adapter:` in the YAML.
"""

from __future__ import annotations

from dataclasses import dataclass

from genebench.constants import DTYPES, RUNTIMES


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
BATCH_SIZE = Option("batch_size", "inputs per forward pass", type=int)
TRUST_REMOTE_CODE = Option("trust_remote_code", "allow the model's own Python code to run (needed by e.g. "
                                                "DNABERT-2, HyenaDNA)", type=bool)
MAX_LENGTH = Option("max_length", "tokens per chunk of a long sequence (default: the model's context)", type=int)
HF = (POOLING, DEVICE, DTYPE, BATCH_SIZE, TRUST_REMOTE_CODE)
"""The options every Hugging Face encoder takes (the model revision is `--revision`, for every input kind)."""

SOURCE = Option("source", "description text: bundled RefSeq summaries (default), live NCBI, HGNC names, or a CSV",
                choices=("refseq", "ncbi", "hgnc", "csv"), flag="--description-source")
DESCRIPTIONS = Option("descriptions", "description CSV (symbol,description) for source csv", is_file=True)
RUNTIME = Option("runtime", "description input: where the text model runs: torch, or numpy (BERT "
                            "sentence-transformers models such as all-MiniLM-L6-v2, float32 on the CPU, no torch "
                            "needed); default auto: torch when installed, else numpy", choices=RUNTIMES)
