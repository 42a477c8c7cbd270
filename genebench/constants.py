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


def check_cache_path(path: Path, what: str, expected: str) -> None:
    """Raise one line naming what is in the way when the cache file `path` cannot be written: `path` is a folder, or
    the nearest existing folder above it is a file.

    Args:
        path: the cache file.
        what: the cache, as the line names it ("embedding cache").
        expected: what `path` should be ("the cache's parquet file").

    Raises:
        IsADirectoryError: `path` is a folder.
        NotADirectoryError: a file stands where a folder of the path should be.
    """
    if path.is_dir():
        raise IsADirectoryError(f"{what} '{path}' is a folder, expected {expected}; move or remove that folder, then "
                                "rerun.")
    folder = next(folder for folder in path.parents if folder.exists() or folder == folder.parent)
    if not folder.is_dir():
        raise NotADirectoryError(f"{what} '{path}': '{folder}' is a file, expected a folder; move that file, or set "
                                 f"{ENV_CACHE} to a folder (the cache's root; default ~/.cache/genebench).")


def downloads_dir() -> Path:
    """Where source downloads are cached."""
    return cache_dir() / "downloads"
