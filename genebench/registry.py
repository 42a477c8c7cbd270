"""One lazy registry for families and adapters, and one "did you mean" for every name a user types.

A `Registry` maps a name to a `"module:object"` target (or to a record holding one), imported on first use,
so heavy libraries load only when something that needs them is asked for.

Examples:
    >>> colours = Registry("colour", {"red": "colorsys:rgb_to_hsv"}, listing="Known: red.")
    >>> colours.load("red").__name__
    'rgb_to_hsv'
    >>> colours.load("rde")
    Traceback (most recent call last):
    ...
    genebench.errors.GenebenchError: unknown colour 'rde'. Did you mean: 'red'? Known: red.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

from genebench.errors import GenebenchError

T = TypeVar("T")


def unknown_name_message(kind: str, name: str, known: list[str],
                         listing: str = "List them with `genebench tasks`.") -> str:
    """`unknown task 'X'. Did you mean: 'Y'?` plus `listing`: how to see what exists."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f" Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown {kind} '{name}'.{hint} {listing}"


class Registry(Mapping[str, T], Generic[T]):
    """Name -> entry (a `"module:object"` string, or a record whose `target` is one), loaded lazily.

    Args:
        kind: what a name names, for messages ("task family", "input kind").
        entries: name -> entry, in the order they are listed.
        error: the exception an unknown name raises (a `GenebenchError` subclass).
        listing: how to see what exists, appended to the unknown-name message (default: the names).
    """

    def __init__(self, kind: str, entries: dict[str, T], *, error: type[GenebenchError] = GenebenchError,
                 listing: str | None = None) -> None:
        self.kind = kind
        self._entries = dict(entries)
        self._error = error
        self._listing = listing or f"Known: {', '.join(entries)}."

    def __getitem__(self, name: str) -> T:
        if name not in self._entries:
            raise self._error(unknown_name_message(self.kind, name, list(self._entries), self._listing))
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def load(self, name: str) -> Any:
        """Import and return the object behind `name`."""
        entry = self[name]
        module, attribute = str(getattr(entry, "target", entry)).split(":")
        return getattr(importlib.import_module(module), attribute)
