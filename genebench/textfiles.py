"""Opening source text files the way they are published: plain, gzipped or zipped, told apart by their bytes."""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path
from typing import IO

_GZIP = b"\x1f\x8b"
_ZIP = b"PK\x03\x04"


def open_text(path: str | Path, member: str | None = None) -> IO[str]:
    """Open a plain, gzipped or zipped UTF-8 text file (the zip's `member`, or its first .tsv/.csv/.txt/.gmt).

    Line endings are passed through unchanged (`newline=""`), as the `csv` module expects.
    """
    path = Path(path)
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic[:2] == _GZIP:
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    if magic == _ZIP:
        archive = zipfile.ZipFile(path)
        names = [n for n in archive.namelist() if not n.endswith("/")]
        name = member or next((n for n in names if n.rsplit(".", 1)[-1] in {"tsv", "csv", "txt", "gmt"}), names[0])
        return io.TextIOWrapper(archive.open(name), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")
