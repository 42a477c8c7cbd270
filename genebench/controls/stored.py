"""The controls stored in a data folder: the control table and each control's held-out predictions, read back and
checked where they are read.

`controls/scores.parquet` holds one row per (fold scheme, task, control) with its main score and where its
predictions lie (`CONTROL_SCORES_SCHEMA`); `controls/<control>-<folds>.parquet` the predictions (float16, or float32
in `<control>-<folds>-float32.parquet` for the blocks whose score float16 would move). Both are listed and
hash-checked in the manifest and covered by the data revision. A task's predictions are checked against its stored
score when they are first read (`genebench.controls.covered.stored_predictions`): an edited, swapped, reordered or
truncated block is refused in one line.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from genebench.errors import SourceFormatError
from genebench.tasks.metadata import TaskMetadata
from genebench.tasks.types import task_type

CONTROLS_DIR = "controls"
"""The data folder's sub-folder that holds the control table and predictions."""
CONTROL_SCORES = f"{CONTROLS_DIR}/scores.parquet"
"""The control table: one row per (folds, task, control) with its main score and where its predictions lie."""
CONTROL_SCORES_SCHEMA = pa.schema([
    ("folds", pa.string()), ("task", pa.string()), ("control", pa.string()), ("score", pa.float64()),
    ("spread", pa.float64()), ("n_seeds", pa.int64()), ("skipped", pa.string()), ("file", pa.string()),
    ("offset", pa.int64()), ("n_rows", pa.int64()), ("n_columns", pa.int64()), ("column", pa.int64()),
    ("center", pa.list_(pa.float64())),
])
"""`CONTROL_SCORES`' columns. `score` is the control's main score on the task (for a seeded control, the mean over
`n_seeds` seeds, and `spread` their standard deviation, ddof=0); `skipped` why it has none. Per-row predictions, when
stored, are the `n_rows * n_columns` values from `offset` of the single column `value` of `file` (row-major, rows in
the task's row order, null where the control could not score a row), each column stored minus its `center`
(`encode_predictions`); a derived task reads column `column` of its parent's block (-1: the whole block)."""


def encode_predictions(values: np.ndarray, dtype: type[np.floating] = np.float16) -> tuple[np.ndarray, list[float]]:
    """Predictions as stored: each column minus its median (its `center`), as `dtype`, and the centers.

    float16 keeps 11 significant bits of a value, so a column whose values crowd around an offset (the logits of a
    small task, 1.20 +- 0.05) would lose its ranking to ties; centred, its values keep 11 bits of their spread.

    Args:
        values: shape (n_rows, n_columns), float32 predictions, NaN where there is none.
        dtype: the stored type, float16 or float32.

    Examples:
        >>> stored, center = encode_predictions(np.array([[1.2001], [1.2002], [np.nan]], dtype=np.float32))
        >>> bool(decode_predictions(stored, center)[0, 0] < decode_predictions(stored, center)[1, 0])
        True
    """
    finite = np.where(np.isfinite(values), values, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column has no median
        center = np.nan_to_num(np.nanmedian(finite, axis=0)).astype(np.float32)
    return (values - center[None, :]).astype(dtype), center.astype(np.float64).tolist()


def decode_predictions(stored: np.ndarray, center: Sequence[float]) -> np.ndarray:
    """Stored predictions back as float32 values (the inverse of `encode_predictions`, up to float16 rounding)."""
    stored = np.asarray(stored).reshape(len(stored), -1)
    shift = np.asarray(center, dtype=np.float32) if len(center) else np.zeros(stored.shape[1], dtype=np.float32)
    return stored.astype(np.float32) + shift[None, :]


class StoredControls:
    """A data folder's stored controls.

    Args:
        path: the data folder (for messages).
        manifest: its parsed manifest.
        checked: relative path -> the file's path once its sha256 matches the manifest.
    """

    def __init__(self, path: Path, manifest: dict[str, Any], checked: Callable[[str], Path]) -> None:
        self.path, self.manifest, self._checked = path, manifest, checked
        self._files: dict[str, np.ndarray] = {}
        self.verified: set[tuple[str, str]] = set()
        """(scheme, task) whose predictions were checked against their scores (`genebench.controls.covered`)."""

    @cached_property
    def table(self) -> pd.DataFrame:
        """The control table (`CONTROL_SCORES_SCHEMA`), hash-checked; empty when the folder has none.

        Raises:
            SourceFormatError: the table does not match its sha256 or its schema.
        """
        if CONTROL_SCORES not in self.manifest.get("controls", {}).get("files", []):
            return CONTROL_SCORES_SCHEMA.empty_table().to_pandas()
        table = pq.read_table(self._checked(CONTROL_SCORES))
        if not table.schema.equals(CONTROL_SCORES_SCHEMA):
            raise SourceFormatError(f"data folder '{self.path}': '{CONTROL_SCORES}' has columns {table.column_names}, "
                                    f"expected {CONTROL_SCORES_SCHEMA.names}; rerun `genebench controls`.")
        return table.to_pandas()

    def scores(self, scheme: str) -> dict[str, dict[str, float]]:
        """Task -> control -> main score under fold scheme `scheme`; a control that could not score a task is left
        out of its entry."""
        table = self.table[(self.table["folds"] == scheme) & self.table["score"].notna()]
        scores: dict[str, dict[str, float]] = {}
        for task, control, score in zip(table["task"], table["control"], table["score"].astype("float64")):
            scores.setdefault(task, {})[control] = float(score)
        return scores

    @cached_property
    def _records(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """(scheme, task) -> the control table's records that locate stored predictions."""
        records: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for record in self.table[self.table["file"].notna()].to_dict("records"):
            records.setdefault((record["folds"], record["task"]), []).append(record)
        return records

    def predictions(self, meta: TaskMetadata, scheme: str) -> dict[str, np.ndarray]:
        """Each stored control's held-out values per row of the task (`BenchmarkData.control_predictions`)."""
        out = {}
        for record in self.records(meta.name, scheme):
            flat = self._file(record["file"])
            start, n_rows, n_columns = int(record["offset"]), int(record["n_rows"]), int(record["n_columns"])
            stored = flat[start:start + n_rows * n_columns]
            if stored.size != n_rows * n_columns:
                raise self.refused(record, f"holds {stored.size} values where {n_rows * n_columns} are recorded")
            stored = stored.reshape(n_rows, n_columns)
            center, column = record["center"], int(record["column"])
            if column >= 0:  # a derived task's column alone, not its parent's whole block
                stored, center = stored[:, [column]], [center[column]] if len(center) else []
            block = decode_predictions(stored, center)
            values = block if column < 0 and task_type(meta.type).has_columns else block[:, 0]
            out[record["control"]] = values.astype(np.float32)
        return out

    def records(self, task: str, scheme: str) -> list[dict[str, Any]]:
        """The control table's records of `task` under `scheme` that locate stored predictions."""
        return self._records.get((scheme, task), [])

    def refused(self, record: dict[str, Any], problem: str) -> SourceFormatError:
        """The one-line error of a stored block that is not what its record says."""
        return SourceFormatError(
            f"data folder '{self.path}': the stored {record['control']} control of task '{record['task']}' under "
            f"{record['folds']} folds ({record['file']}) {problem}; the file was edited or swapped. Rescore the "
            f"controls with `genebench controls --data {self.path}`.")

    def _file(self, relative: str) -> np.ndarray:
        if relative not in self._files:
            self._files[relative] = pq.read_table(self._checked(relative)).column("value").to_numpy(
                zero_copy_only=False)
        return self._files[relative]
