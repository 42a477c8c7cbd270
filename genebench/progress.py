"""Progress of long work: a tqdm bar with rate and ETA on a terminal, one log line a minute elsewhere, and the
seconds each phase of it took (`Timer`).

A bar redrawn with carriage returns is unreadable in a log file or a CI console, and no bar at all leaves a
many-minute job silent. Off a terminal, `progress` logs "what: done of total unit (percent), rate, ETA" at most
once per `interval` seconds, and once at the end.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

logger = logging.getLogger(__name__)

LOG_INTERVAL = 60.0
"""Seconds between two progress lines when stderr is not a terminal."""


def duration(seconds: float) -> str:
    """A short human duration.

    Examples:
        >>> duration(42), duration(258), duration(7260)
        ('42 s', '4 min 18 s', '2 h 1 min')
    """
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


class LogProgress:
    """A tqdm-like counter that logs a line with rate and ETA once per `interval` seconds: on `update`, and from a
    background timer while a long step (one cache chunk of a slow model) gives no update.
    """

    def __init__(self, total: int, desc: str, unit: str, *, interval: float = LOG_INTERVAL,
                 clock: Callable[[], float] = time.monotonic, heartbeat: bool = True) -> None:
        self.total, self.desc, self.unit, self.interval, self.clock = total, desc, unit, interval, clock
        self.n = 0
        self.start = self.last = clock()
        self._closed = threading.Event()
        if heartbeat:
            threading.Thread(target=self._beat, daemon=True, name=f"progress: {desc}").start()

    def _beat(self) -> None:
        while not self._closed.wait(self.interval / 4):
            if self.clock() - self.last >= self.interval:
                self._log()

    def update(self, n: int = 1) -> None:
        """Count `n` more done; log a line when `interval` has passed since the last one."""
        self.n += n
        if self.clock() - self.last >= self.interval:
            self._log()

    def set_postfix_str(self, text: str) -> None:  # tqdm's API; the line shows counts only
        """Ignored off a terminal."""

    def close(self) -> None:
        """Stop the timer; log the final line (when anything was done)."""
        if self._closed.is_set():
            return
        self._closed.set()
        if self.n:
            self._log()

    def _log(self) -> None:
        self.last = now = self.clock()
        elapsed = max(now - self.start, 1e-9)
        rate = self.n / elapsed
        left = (self.total - self.n) / rate if rate > 0 else float("inf")
        eta = f", ETA {duration(left)}" if self.n < self.total and left != float("inf") else ""
        logger.info("%s: %d of %d %ss (%.1f%%), %.1f %ss/s, %s elapsed%s", self.desc, self.n, self.total, self.unit,
                    100 * self.n / max(self.total, 1), rate, self.unit, duration(elapsed), eta)

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ProgressWriter(logging.StreamHandler):
    """A log handler that writes each line through tqdm, above any bar on the terminal, so no log line ever breaks
    into a bar; `genebench`'s command line logs through it."""

    def emit(self, record: logging.LogRecord) -> None:
        from tqdm import tqdm

        try:
            tqdm.write(self.format(record), file=self.stream)
        except Exception:  # noqa: BLE001 - logging's contract: a failing handler reports, never raises
            self.handleError(record)


def progress(total: int, desc: str, unit: str, *, enabled: bool = True, **tqdm_kwargs: Any):
    """A progress counter for `total` `unit`s: tqdm (with rate and ETA) when stderr is a terminal, else a
    `LogProgress`; a silent tqdm when not `enabled`."""
    from tqdm.auto import tqdm

    if enabled and not sys.stderr.isatty():
        return LogProgress(total, desc, unit)
    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, **tqdm_kwargs)


_SHARES: ContextVar[Callable[[float], None] | None] = ContextVar("genebench_progress_shares", default=None)
"""Where the `work_bar`s opened now send their progress (set by `work_shares`): fractions of the block's work."""


@contextmanager
def work_shares(bar: Any, amount: int) -> Iterator[None]:
    """Let the `work_bar`s opened in this block move `bar` as their work goes (a cache chunk's batches move the
    overall bar), each counting its share of `amount`; on leaving the block normally `bar` has moved by `amount`."""
    done, moved = 0.0, 0

    def advance(share: float) -> None:
        nonlocal done, moved
        done += share
        step = min(amount, round(done * amount)) - moved
        if step > 0:
            bar.update(step)
            moved += step

    token = _SHARES.set(advance)
    try:
        yield
    finally:
        _SHARES.reset(token)
    bar.update(amount - moved)


class _Share:
    """A `work_bar` inside `work_shares`: its updates go to the bar outside, as fractions of its total."""

    def __init__(self, total: int, advance: Callable[[float], None]) -> None:
        self.total, self.advance = max(total, 1), advance

    def update(self, n: int = 1) -> None:
        self.advance(n / self.total)

    def __enter__(self) -> _Share:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def work_bar(total: int, desc: str, unit: str) -> Any:
    """A bar for one encoder call's batches: inside `work_shares` it moves the bar outside (one bar on screen,
    moving batch by batch), else its own transient tqdm bar on a terminal."""
    advance = _SHARES.get()
    if advance is not None:
        return _Share(total, advance)
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit, desc=desc, disable=None, leave=False)


class Timer:
    """Seconds spent per phase, summed over every time a phase is entered, on any thread."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._lock = threading.Lock()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self.seconds[name] += time.perf_counter() - start
