"""genebench: does your model understand genes?

Score a model's gene representations with linear probes on curated gene properties.

Examples:
    >>> import genebench
    >>> genebench.list_tasks(category="localization").names  # doctest: +SKIP
    >>> task = genebench.load_task("TF vs non-TF")           # doctest: +SKIP
    >>> genebench.open_data().path                            # doctest: +SKIP
    PosixPath('.../genebench/snapshot')
    >>> genebench.open_data().revision["data_hash"]          # doctest: +SKIP
    '593ea0e6529cc0b7'
"""

__version__ = "0.1.0"

from genebench.data import open_data  # noqa: E402
from genebench.results import load_results, summary_table  # noqa: E402
from genebench.tasks.registry import get_task_metadata, list_tasks, load_task  # noqa: E402

__all__ = ["__version__", "get_task_metadata", "list_tasks", "load_results", "load_task", "open_data", "summary_table"]
