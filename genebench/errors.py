"""The exception hierarchy: one base, each subclass also a builtin, each carrying what it names."""

from __future__ import annotations


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
