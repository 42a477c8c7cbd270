"""The exception hierarchy: one base, each subclass also a builtin, each carrying what it names."""

from __future__ import annotations

import re


class GenebenchError(Exception):
    """Base class of every error genebench raises on purpose."""


class UnknownTaskError(GenebenchError, KeyError):
    """A task, family or category name that does not exist."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class SourceFormatError(GenebenchError, ValueError):
    """A source file that exists but is not in the expected format."""


class MissingSourceError(GenebenchError, FileNotFoundError):
    """A source file that is absent or cannot be reached."""


class EmbeddingError(GenebenchError, ValueError):
    """Embeddings that cannot be probed as given."""


class ResultsError(GenebenchError, ValueError):
    """A result file or folder that is malformed or inconsistent."""


class SubmissionError(GenebenchError, ValueError):
    """A submission that fails validation."""


class DistributedError(GenebenchError, RuntimeError):
    """Work that failed on a cluster worker; the message names the node and the model or task."""


class ConfigError(GenebenchError, ValueError):
    """A setting, option or config file value outside what is accepted."""


class MissingDependencyError(GenebenchError, ImportError):
    """A library that a feature needs is not installed (see `genebench.optional`)."""


class AdapterError(GenebenchError, ValueError):
    """An adapter setting, model or tokenizer that cannot be used as given."""


def worker_error(exc: BaseException, what: str) -> str:
    """One line for a failure on a worker: the `DistributedError` raised there (it names the node and the model
    or task), else `what` and the node Ray reports."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, DistributedError):
            return str(cause).splitlines()[0]
        cause = cause.__cause__ or getattr(cause, "cause", None)
    raised = re.search(rf"{DistributedError.__module__}\.DistributedError: (.+)", str(exc))  # in the remote traceback
    if raised:
        return raised.group(1).strip()
    node = getattr(exc, "ip", None) or "unknown (the worker died)"
    first = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
    return f"{what} failed on node {node}: {type(exc).__name__}{': ' + first if first else ''}"
