"""genebench: does your model understand genes?

Score a model's gene representations with linear probes on curated gene properties.

Examples:
    >>> import genebench
    >>> genebench.list_tasks(category="localization").names  # doctest: +SKIP
    >>> task = genebench.load_task("TF vs non-TF")           # doctest: +SKIP
"""

__version__ = "0.1.0"

from genebench.data import open_data  # noqa: E402
from genebench.results import load_results, summary_table  # noqa: E402
from genebench.tasks.registry import get_task_metadata, list_tasks, load_task  # noqa: E402

__all__ = ["__version__", "get_task_metadata", "list_tasks", "load_results", "load_task", "open_data", "summary_table"]
