"""How counts read in messages: "1 task", "2 tasks"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and `noun`, plural unless `n` is 1.

    Examples:
        >>> counted(1, "task"), counted(133, "task"), counted(2, "task has", "tasks have")
        ('1 task', '133 tasks', '2 tasks have')
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
