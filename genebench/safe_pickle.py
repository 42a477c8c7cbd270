"""Read downloaded pickles without running code: only builtin containers, numbers and strings pass.

Geneformer's token dictionary and Genecorpus' label dictionaries ship as pickles. `pickle.load` on a
downloaded file can execute arbitrary code, so genebench reads them through `safe_load`, whose unpickler
refuses every global except a short allow-list of builtin types.
"""

from __future__ import annotations

import pickle
from typing import IO, Any

from genebench.errors import SourceFormatError

_ALLOWED = frozenset({
    ("builtins", "dict"),
    ("builtins", "list"),
    ("builtins", "tuple"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "str"),
    ("builtins", "bytes"),
    ("builtins", "int"),
    ("builtins", "float"),
    ("builtins", "complex"),
    ("builtins", "bool"),
    ("collections", "OrderedDict"),
})


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        module = "builtins" if module == "__builtin__" else module  # protocols 0-2 name the Python 2 module
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed")


def safe_load(fileobj: IO[bytes]) -> Any:
    """Unpickle `fileobj`, accepting only builtin containers, numbers and strings.

    Args:
        fileobj: a binary file object positioned at the start of a pickle.

    Returns:
        The unpickled object (dict, list, tuple, set, str, bytes, int, float, bool or None, nested).

    Raises:
        SourceFormatError: the pickle names any other class or function, or is not a valid pickle.

    Examples:
        >>> import io, pickle
        >>> safe_load(io.BytesIO(pickle.dumps({"ENSG00000141510": 7})))
        {'ENSG00000141510': 7}
    """
    name = getattr(fileobj, "name", "<stream>")
    try:
        return _RestrictedUnpickler(fileobj).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, RecursionError,
            MemoryError) as exc:
        raise SourceFormatError(
            f"pickle '{name}': expected only builtin containers, numbers and strings, found {exc}; "
            "convert the file to JSON or CSV, or obtain it from a trusted source and load it yourself."
        ) from exc
