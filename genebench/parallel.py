"""Work spread over this machine's cores: one thread per core, each computing with one BLAS thread."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import threadpool_limits


def n_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextlib.contextmanager
def core_threads(workers: int | None = None) -> Iterator[ThreadPoolExecutor]:
    """A pool of `workers` threads (default one per core), BLAS single-threaded while it is open.

    numpy releases the GIL in its loops and BLAS calls, so the threads compute at once, and every product sums in
    the order one BLAS thread gives, whatever the core count. Work still queued when the block is left is cancelled.
    """
    pool = ThreadPoolExecutor(workers or n_cores())
    with threadpool_limits(1, user_api="blas"):
        try:
            yield pool
        finally:
            pool.shutdown(cancel_futures=True)
