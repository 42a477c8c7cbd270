"""A model's lift: its main score minus the best control's, the one place it is computed."""

from __future__ import annotations

from collections.abc import Mapping

from genebench.tasks.metadata import best_of


def lift(main_score: float | None, controls: Mapping[str, float]) -> float | None:
    """A main score minus the best of `controls`, to 6 decimals; None without either.

    Examples:
        >>> lift(0.8, {"name": 0.7, "random": 0.5}), lift(0.8, {}), lift(None, {"name": 0.7})
        (0.1, None, None)
    """
    best = best_of(dict(controls))
    return None if main_score is None or best is None else round(main_score - best[1], 6)
