"""The `evaluate` metric module; its path is `METRIC_PATH` (pass it to `evaluate.load`)."""

from pathlib import Path

METRIC_PATH = Path(__file__).with_name("genebench.py")
"""Location of the metric script, for ``evaluate.load(str(METRIC_PATH), config_name)``."""

__all__ = ["METRIC_PATH"]
