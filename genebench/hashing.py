"""File digests, computed once per process for each file version."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_SHA256: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, computed once per process for each (path, size, mtime)."""
    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_size, stat.st_mtime_ns)
    if key not in _SHA256:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _SHA256[key] = digest.hexdigest()
    return _SHA256[key]
