"""Makes the folder loadable: `evaluate.load(<folder>)` runs `<folder>/<folder name>.py`, i.e. this file."""

from genebench.metric.genebench import Genebench

__all__ = ["Genebench"]
