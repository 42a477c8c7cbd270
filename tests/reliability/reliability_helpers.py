"""Shared helpers of the reliability suite: one command's outcome, and checks of one clear line and of files."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

TASK = "TF vs non-TF"
"""The task most cases run: small, binary, in the bundled snapshot."""


@dataclass
class Outcome:
    """What one `genebench` command did."""

    code: int
    out: str
    err: str

    def error_line(self) -> str:
        """The one error line, checked to be the last line of stderr with no traceback before it."""
        assert "Traceback" not in self.err, self.err
        lines = [line for line in self.err.splitlines() if line.strip()]
        assert lines, "no error message"
        return lines[-1]


def fails(outcome: Outcome, command: str, *fragments: str, code: int = 2) -> str:
    """Assert `outcome` is one clear error line of `genebench <command>` holding every fragment; return it."""
    assert outcome.code == code, (outcome.code, outcome.err[-2000:])
    line = outcome.error_line()
    assert line.startswith(f"genebench {command}: error: "), line
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


def snapshot(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` (relative path -> digest): compare before and after to see nothing
    was lost, changed or half-written."""
    if not folder.exists():
        return {}
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def no_partial_files(folder: Path) -> None:
    """No temporary or staging file is left anywhere under `folder`."""
    leftovers = [p for p in folder.rglob("*") if ".tmp" in p.name or p.name.startswith((".staging-", ".old-"))
                 or p.name == ".genebench.lock"] if folder.exists() else []
    assert not leftovers, leftovers


def result_files(folder: Path) -> list[Path]:
    """The task result files of a results folder."""
    return sorted(p for p in folder.rglob("*.json") if p.name != "model_meta.json")



def paper_result_files(folder: Path) -> list[Path]:
    """The paper-fold task result files of a run's folder (other schemes sit in its `folds-<scheme>/` sub-folder)."""
    return [p for p in result_files(folder) if not p.relative_to(folder).parts[0].startswith("folds-")]
