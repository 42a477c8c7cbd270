"""Environment variables, default locations and source URLs, defined once."""

from __future__ import annotations

import os
from pathlib import Path

ENV_CACHE = "GENEBENCH_CACHE"
ENV_DATA = "GENEBENCH_DATA"

DTYPES = ("auto", "float32", "bfloat16", "float16")
"""Precisions a model can run in (`--dtype`); "auto" picks the fastest faithful one for the device."""

RUNTIMES = ("auto", "torch", "numpy")
"""Where a description model runs (`--runtime`): "auto" picks torch when it is installed, else numpy."""

ENGINES = ("local", "ray")
"""Where encoding and probing run (`--engine`): this process, or a Ray cluster (`genebench.distributed`)."""
CHUNK_SIZE = 1024
"""Genes encoded between two writes of the embedding cache (one Ray Data block with `--engine ray`)."""

DEFAULT_SEED = 0
N_FOLDS = 5

HGNC_URL = "https://storage.googleapis.com/public-download-files/hgnc/tsv/tsv/hgnc_complete_set.txt"

SNAPSHOT_DIR = Path(__file__).parent / "snapshot"


def cache_dir() -> Path:
    """Root of genebench's caches: `$GENEBENCH_CACHE`, else `~/.cache/genebench`."""
    return Path(os.environ.get(ENV_CACHE) or Path.home() / ".cache" / "genebench")


def downloads_dir() -> Path:
    """Where source downloads are cached."""
    return cache_dir() / "downloads"
