"""Optional libraries: imported where a feature first needs them, or one line saying how to install them."""

from __future__ import annotations

import importlib
from types import ModuleType

from genebench.errors import MissingDependencyError

TORCH = ('pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu && pip install "genebench[torch]" '
         "(CPU-only Linux; for macOS or CUDA, the README's Install section)")
"""What installs torch (its CPU build on Linux, else the README's command for the machine) and the libraries that
run models on it (the `torch` extra: transformers, sentence-transformers)."""
RAY = 'pip install "genebench[ray]"'
"""What installs the Ray engine's dependencies (the `ray` extra)."""
TEXT = 'pip install "genebench[text]"'
"""What installs the text metrics' dependencies (the `text` extra)."""


def import_optional(module: str, *, needed_for: str, install: str) -> ModuleType:
    """`module` (a package or one of its modules), imported.

    Raises:
        MissingDependencyError: it is not installed; the message says what needs it and runs `install`.

    Examples:
        >>> import_optional("json", needed_for="results", install="nothing").__name__
        'json'
        >>> import_optional("no_such_module", needed_for="x", install="pip install y")
        Traceback (most recent call last):
        ...
        genebench.errors.MissingDependencyError: x needs no_such_module, which is not installed; run: pip install y
    """
    package = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name not in (package, module):
            raise  # the library is there but one of its own imports failed: show that
        raise MissingDependencyError(f"{needed_for} needs {package}, which is not installed; run: {install}") from exc


def installed(module: str) -> bool:
    """Whether `module` is installed (a library that is there but fails on import raises, as in `import_optional`)."""
    try:
        import_optional(module, needed_for=module, install="")
    except MissingDependencyError:
        return False
    return True
