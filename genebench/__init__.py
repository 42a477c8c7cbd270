"""genebench: does your model understand genes?

Score a model's gene representations with linear probes on curated gene properties.

Examples:
    >>> import genebench
    >>> genebench.list_tasks(category="localization").names  # doctest: +SKIP
    >>> task = genebench.load_task("TF vs non-TF")           # doctest: +SKIP
    >>> genebench.open_data().path                            # doctest: +SKIP
    PosixPath('.../genebench/snapshot')
    >>> genebench.open_data().data_hash          # doctest: +SKIP
    '593ea0e6529cc0b7'
"""

__version__ = "0.1.0"

import importlib  # noqa: E402

_EXPORTS = {"open_data": "genebench.data", "load_results": "genebench.results", "summary_table": "genebench.results",
            "get_task_metadata": "genebench.catalogue", "list_tasks": "genebench.catalogue",
            "load_task": "genebench.catalogue"}
"""Name -> the module it is imported from on first use, so `import genebench` loads no pandas (PEP 562)."""


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'genebench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["__version__", "get_task_metadata", "list_tasks", "load_results", "load_task", "open_data", "summary_table"]
