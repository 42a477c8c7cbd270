"""The names-only reference: what models that read nothing but a gene's name score in Understanding.

The name control reads names as well as the simple readers measured in issue 32, yet a names-only model still sits
a little off zero on some tasks. So beside every Understanding a user is shown what names alone score there, on
the same data revision: `benchmarks/bench_understanding.py --store-reference` runs each names-only model through
`genebench run --folds family` and stores its Understanding here (`names_only.json`). Understanding is measured
above the name control; a model's Understanding means something where it clears this line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from genebench.atomic import write_atomic
from genebench.errors import SourceFormatError

REFERENCE_FILE = Path(__file__).with_name("names_only.json")


@dataclass(frozen=True)
class NamesOnlyReader:
    """One names-only model's Understanding (family folds) over the tasks Understanding keeps."""

    model: str
    mean: float
    low: float
    high: float
    n_tasks: int
    n_significant: int

    def problem(self) -> str | None:
        """What is wrong with the stored figures, or None."""
        if not all(math.isfinite(v) and -1 <= v <= 1 for v in (self.mean, self.low, self.high)):
            return f"{self.model!r}: mean and interval must be finite numbers in [-1, 1]"
        if not self.low <= self.mean <= self.high:
            return f"{self.model!r}: mean {self.mean} lies outside its interval [{self.low}, {self.high}]"
        if not 0 <= self.n_significant <= self.n_tasks:
            return f"{self.model!r}: {self.n_significant} significant tasks of {self.n_tasks}"
        return None


@dataclass(frozen=True)
class NamesOnlyReference:
    """The names-only readers measured on one data revision (`data_hash`), with the interval method they used."""

    data_hash: str
    method: str
    readers: tuple[NamesOnlyReader, ...]

    def lines(self) -> list[str]:
        """Screen lines: a title naming the data, then per reader "MiniLM over HGNC names: +0.001 [-0.001, +0.003],
        significant on 30 of 117 tasks"."""
        return [f"names-only reference, measured on data {self.data_hash} (understanding, family folds; a model that "
                "reads only gene names scores about this):",
                *(f"  {r.model}: {r.mean:+.3f} [{r.low:+.3f}, {r.high:+.3f}], significant on {r.n_significant} of "
                  f"{r.n_tasks} tasks" for r in self.readers)]


def names_only_reference(data_hash: str, path: Path = REFERENCE_FILE) -> NamesOnlyReference | None:
    """The reference measured on data `data_hash`, or None when none was (another data revision, or no file).

    Raises:
        SourceFormatError: the file is not a reference as `store_reference` writes it.
    """
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text())
        reference = NamesOnlyReference(stored["data_hash"], stored["method"],
                                       tuple(NamesOnlyReader(**r) for r in stored["readers"]))
    except (ValueError, KeyError, TypeError) as error:
        raise SourceFormatError(f"names-only reference {path}: expected the JSON `store_reference` writes "
                                f"({error})") from None
    if problem := next((p for r in reference.readers if (p := r.problem())), None):
        raise SourceFormatError(f"names-only reference {path}: {problem}")
    return reference if reference.data_hash == data_hash else None


def store_reference(data_hash: str, method: str, readers: Sequence[NamesOnlyReader],
                    path: Path = REFERENCE_FILE) -> NamesOnlyReference:
    """Write the reference for data `data_hash` atomically and return it as read back."""
    record = {"data_hash": data_hash, "method": method, "readers": [asdict(r) for r in readers]}
    write_atomic(path, json.dumps(record, indent=1) + "\n")
    return names_only_reference(data_hash, path)
