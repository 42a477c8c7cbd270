"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Every temporary name is unique (two processes writing the same file never collide), and every file is
left with the mode a plain `open()` would give it (0666 less the umask, usually 0644), not `mkstemp`'s 0600.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

TMP_SUFFIX = ".tmp"
"""Every temporary file is `.<name>.<random>.tmp` beside its target; one left by a killed process is garbage."""


def remove_stale_temporaries(folder: Path) -> int:
    """Delete the temporary files of killed writers under `folder`; call it only while holding the folder's lock.

    Returns:
        How many were removed.
    """
    stale = [p for p in Path(folder).rglob(f".*{TMP_SUFFIX}") if p.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    return len(stale)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def _atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a unique temporary path beside `path`; on success move it into place, on failure remove it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TMP_SUFFIX)
    os.close(handle)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, data: str | bytes | Callable[[Path], object]) -> Path:
    """Write `data` (text as UTF-8, bytes as is, or a function that writes a given path) to `path` atomically.

    The parent folder is created; on any failure the temporary file is removed and `path` is untouched.

    Examples:
        >>> write_atomic(tmp / "t.parquet", lambda part: pq.write_table(table, part))  # doctest: +SKIP
    """
    path = Path(path)
    with _atomic_path(path) as tmp:
        if callable(data):
            data(tmp)
        else:
            tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path
