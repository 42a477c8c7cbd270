"""One writer per folder: a lock file naming its process, and leftovers of dead processes recognised as such.

`folder_lock(folder)` creates `<folder>/.genebench.lock` exclusively (it holds the owner's PID and host) and
removes it on exit; taking and releasing it removes any temporary file in the folder (the holder is its only
writer, so one found then is garbage). A second process asking for the same folder fails at once with a message
naming the owner; a lock left by a process that no longer runs on this host is taken over with a warning.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from genebench.atomic import remove_stale_temporaries
from genebench.errors import GenebenchError

logger = logging.getLogger(__name__)

LOCK_FILE = ".genebench.lock"


class FolderLockedError(GenebenchError, RuntimeError):
    """Another live process is writing into the same folder."""


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True


def _owner(path: Path) -> dict | None:
    try:
        owner = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) and isinstance(owner.get("pid"), int) else None


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return float("inf")


@contextmanager
def folder_lock(folder: str | Path, *, what: str = "genebench") -> Iterator[Path]:
    """Hold `<folder>/.genebench.lock` for the duration of the block.

    Raises:
        FolderLockedError: a live process holds the lock.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    me = {"pid": os.getpid(), "host": socket.gethostname(), "what": what}
    for _ in range(3):
        try:
            handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            owner = _owner(path)
            if owner is None and _age(path) < 5.0:  # being written this instant by its owner
                owner = {"pid": -1, "host": "this host"}
            if owner is not None and (owner.get("host") != me["host"] or owner["pid"] == -1
                                      or pid_alive(owner["pid"])):
                raise FolderLockedError(
                    f"folder '{folder}' is in use by another {owner.get('what', 'genebench')} (process "
                    f"{owner['pid']} on {owner.get('host')}); wait for it to finish, or pass another folder. If no "
                    f"such process runs, delete '{path}'."
                ) from None
            logger.warning("folder '%s': removing a stale lock left by process %s, which no longer runs", folder,
                           owner.get("pid") if owner else "unknown")
            path.unlink(missing_ok=True)
            continue
        with os.fdopen(handle, "w") as stream:
            json.dump(me, stream)
        break
    else:
        raise FolderLockedError(f"folder '{folder}': cannot take its lock '{path}'; delete it and retry.")
    if removed := remove_stale_temporaries(folder):
        logger.warning("folder '%s': removed %d temporary files of an earlier %s that was killed", folder, removed,
                       what)
    try:
        yield path
    finally:
        if (_owner(path) or {}).get("pid") == me["pid"]:
            remove_stale_temporaries(folder)  # a write cut short (Ctrl-C just as it made its temporary) leaves none
            path.unlink(missing_ok=True)
