"""Optional libraries: imported where a feature first needs them, or one line saying how to install them."""

from __future__ import annotations

import importlib
import re
from importlib import metadata
from types import ModuleType

from genebench.errors import MissingDependencyError


def extra_install(extra: str, *, besides: tuple[str, ...] = ()) -> str:
    """The pip command that installs genebench's optional `extra` (without the packages named in `besides`): its
    requirements by name, from genebench's own metadata. Never `pip install "genebench[...]"`: the "genebench" on
    PyPI is another project.

    Examples:
        >>> extra_install("ray")
        'pip install "ray[client,data]>=2.60"'
    """
    try:
        requires = metadata.requires("genebench") or []
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return f'pip install -e ".[{extra}]" (in the genebench clone)'
    marker = re.compile(r"extra\s*==\s*['\"]" + re.escape(extra) + r"['\"]")
    wanted = [r.split(";")[0].strip() for r in requires if marker.search(r)]
    return "pip install " + " ".join(f'"{r}"' for r in wanted if re.split(r"[\[<>=!~ ]", r)[0] not in besides)


TORCH = ("pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu && "
         + extra_install("torch", besides=("torch",))
         + " (CPU-only Linux; for macOS or CUDA, the README's Install section)")
"""What installs torch (its CPU build on Linux, else the README's command for the machine) and the libraries that
run models on it (the `torch` extra: transformers, sentence-transformers)."""
RAY = extra_install("ray")
"""What installs the Ray engine's dependencies (the `ray` extra)."""
TEXT = extra_install("text")
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
