"""Writing a data folder: its manifest, its parquet files, and finished sub-folders swapped into place.

Every write is atomic: a reader sees the old file or folder or the new one, never half of one; the manifest
(`genebench.json`) and the dataset card are rewritten last.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from genebench import __version__
from genebench.atomic import write_atomic
from genebench.card import write_card
from genebench.data import MANIFEST, data_hash, read_manifest
from genebench.hashing import file_sha256

MANIFEST_FORMAT = 2
"""2: the data hash covers every file, the stored controls included (1 left them out)."""


def manifest_of(out: Path) -> dict[str, Any]:
    """The folder's manifest, or a new empty one."""
    if not (out / MANIFEST).exists():
        return {"format": MANIFEST_FORMAT, "families": {}, "files": {}}
    return read_manifest(out)


def commit_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Hash every file the manifest names (families, symbols, descriptions, controls), then write the card and the
    manifest."""
    files = [f for fam in manifest["families"].values() for f in fam["files"]]
    files += [f for f in ("symbols/hgnc.parquet", "descriptions/refseq.parquet") if (out / f).is_file()]
    files += manifest.get("controls", {}).get("files", [])
    manifest["files"] = {f: {"sha256": file_sha256(out / f), "bytes": (out / f).stat().st_size} for f in sorted(files)}
    manifest["format"] = MANIFEST_FORMAT
    manifest["data_hash"] = data_hash(manifest)
    manifest["genebench_version"] = __version__
    write_card(out, manifest)
    write_atomic(out / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))


def swap(staging: Path, target: Path) -> None:
    """Move the finished staging folder into place, then drop the folder it replaces."""
    old = target.with_name(f".old-{target.name}-{uuid.uuid4().hex[:8]}")
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def write_parquet(table: pd.DataFrame | pa.Table, path: Path) -> None:
    """Write a frame or Arrow table as parquet, atomically."""
    if isinstance(table, pd.DataFrame):
        table = pa.Table.from_pandas(table, preserve_index=False)
    write_atomic(path, lambda part: pq.write_table(table, part))
