"""One `datasets` builder per task family, registered lazily by name (the table is `genebench.builders.FAMILIES`)."""

from __future__ import annotations

from genebench.builders import FAMILIES, get_builder_class

__all__ = ["FAMILIES", "get_builder_class"]
