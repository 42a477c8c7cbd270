"""Read a built genebench data folder (local, bundled snapshot, or a Hub dataset revision).

A data folder holds one sub-folder per family (`<family>/<split>.parquet` in the long layout plus
`<family>/tasks.parquet`, one row of metadata per task), `symbols/hgnc.parquet`, optional
`descriptions/*.parquet`, a dataset card `README.md`, and `genebench.json`, the manifest that lists
every file with its size and sha256, and `data_hash`, a hash of those sha256s. Opening a folder checks
the manifest (valid JSON, its data hash recomputed from its file hashes); each file is checked against its
sha256 the first time it is read in a process. Only families in the manifest are read, and only when their
files match it, so a half-written, edited or swapped file is never accepted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from genebench.constants import ENV_DATA, SNAPSHOT_DIR
from genebench.errors import MissingSourceError, SourceFormatError, UnknownTaskError
from genebench.registry import unknown_name_message
from genebench.tasks.metadata import TaskMetadata
from genebench.tasks.task import Task
from genebench.tasks.types import task_type

logger = logging.getLogger(__name__)

MANIFEST = "genebench.json"


class BenchmarkData:
    """A built data folder: its families, task metadata and rows.

    Examples:
        >>> data = open_data()                                  # doctest: +SKIP
        >>> data.load_task("TF vs non-TF").labels.mean()        # doctest: +SKIP
    """

    def __init__(self, path: str | Path, *, hub_id: str | None = None, hub_revision: str | None = None) -> None:
        self.path = Path(path)
        self.hub_id = hub_id
        self.hub_revision = hub_revision
        if not (self.path / MANIFEST).is_file():
            raise MissingSourceError(
                f"data folder '{self.path}': no {MANIFEST}; it is not a genebench data folder, or its build did not "
                "finish. Build one with `genebench build --out DIR`."
            )
        self.manifest: dict[str, Any] = read_manifest(self.path)
        recomputed = data_hash(self.manifest)
        if self.manifest["data_hash"] != recomputed:
            raise SourceFormatError(
                f"data folder '{self.path}': {MANIFEST} names data_hash {self.manifest['data_hash']!r}, but its file "
                f"hashes give {recomputed!r}; the manifest was edited. Rebuild the folder with `genebench build`."
            )
        self._tables: dict[str, pd.DataFrame] = {}
        self._task_rows: dict[str, dict[str, np.ndarray]] = {}
        self._parents: dict[str, Task] = {}  # multi-label parents, decoded once for all their derived tasks

    # -- what the folder holds -----------------------------------------------------------------------------

    @property
    def families(self) -> list[str]:
        """Families built into this folder."""
        return sorted(self.manifest["families"])

    @property
    def revision(self) -> dict[str, Any]:
        """Source versions per family, a hash of the built files (the revision's id) and its task count: what
        results record."""
        return {
            "data_hash": self.manifest["data_hash"],
            "n_tasks": len(self._metadata),
            "hub_id": self.hub_id,
            "hub_revision": self.hub_revision,
            "sources": {name: fam["source_versions"] for name, fam in self.manifest["families"].items()},
        }

    @cached_property
    def _metadata(self) -> dict[str, TaskMetadata]:
        tasks: dict[str, TaskMetadata] = {}
        controls = self.controls()
        for family in self.families:
            frame = pq.read_table(self._checked(f"{family}/tasks.parquet")).to_pandas()
            for record in frame.to_dict("records"):
                tasks[record["name"]] = metadata_from_record({**record, "controls": controls.get(record["name"], {})})
        return tasks

    def controls(self) -> dict[str, dict[str, float]]:
        """Task -> control -> main score, from the folder's control results (`genebench.controls`).

        Results made on other data (a family rebuilt without `add_controls` since) or unreadable are left out with
        a warning.
        """
        from genebench.errors import ResultsError
        from genebench.results import read_result

        scores: dict[str, dict[str, float]] = {}
        stale = 0
        for relative in self.manifest.get("controls", {}).get("files", []):
            try:
                result = read_result(self._checked(relative))
            except (ResultsError, SourceFormatError):
                stale += 1
                continue
            if result.dataset_revision.get("data_hash") != self.manifest["data_hash"]:
                stale += 1
            elif result.skipped is None:
                control = result.model.id.removeprefix("control/")
                scores.setdefault(result.task.name, {})[control] = round(result.scores[result.main_score].mean, 6)
        if stale:
            logger.warning("data folder '%s': %d control results are unreadable or were made on other data, so they "
                           "are ignored; rerun `genebench controls --data %s`.", self.path, stale, self.path)
        return scores

    @cached_property
    def _aliases(self) -> dict[str, str]:
        return {alias: meta.name for meta in self._metadata.values() for alias in meta.aliases}

    def tasks(self) -> list[TaskMetadata]:
        """Metadata of every task, in family then build order."""
        return list(self._metadata.values())

    def metadata(self, name: str) -> TaskMetadata:
        """One task's metadata; an old name resolves with a warning, an unknown one suggests close names."""
        if name in self._metadata:
            return self._metadata[name]
        if name in self._aliases:
            current = self._aliases[name]
            warnings.warn(f"task '{name}' is now called '{current}'.", UserWarning, stacklevel=3)
            return self._metadata[current]
        raise UnknownTaskError(unknown_name_message("task", name, [*self._metadata, *self._aliases]))

    # -- rows ----------------------------------------------------------------------------------------------

    def table(self, family: str) -> pd.DataFrame:
        """All rows of a family in the long layout (task, entity, entity_2, labels, value, fold)."""
        if family not in self.manifest["families"]:
            raise UnknownTaskError(unknown_name_message("family", family, self.families))
        if family not in self._tables:
            files = [f"{family}/{split}.parquet" for split in self.manifest["families"][family]["splits"]]
            parts = [pq.read_table(self._checked(f)).to_pandas() for f in files]
            self._tables[family] = pd.concat(parts, ignore_index=True)
            self._task_rows[family] = self._tables[family].groupby("task", sort=False).indices
        return self._tables[family]

    def load_task(self, name: str) -> Task:
        """A task's entities, labels and folds as numpy arrays (see `Task`)."""
        meta = self.metadata(name)
        if meta.is_derived:
            if meta.parent not in self._parents:
                self._parents[meta.parent] = self.load_task(meta.parent)
            parent = self._parents[meta.parent]
            column = parent.metadata.label_names.index(meta.label_names[1])
            return Task(meta, parent.entities, parent.labels[:, column].astype(np.int64), parent.folds)
        table = self.table(meta.family)
        rows = table.iloc[self._task_rows[meta.family].get(meta.name, [])]
        pairs = len(meta.entity_types) == 2
        entities = rows[["entity", "entity_2"]].to_numpy(dtype=object) if pairs else rows["entity"].to_numpy(
            dtype=object)
        return Task(meta, entities, labels_array(meta, rows), rows["fold"].to_numpy(dtype=np.int64))

    def auxiliary(self, family: str, name: str) -> pd.DataFrame:
        """A family's auxiliary table, e.g. `auxiliary("opentargets", "diseases")` (id, name, description).

        Also loadable as the dataset config `<family>_<name>`.
        """
        if family not in self.manifest["families"]:
            raise UnknownTaskError(unknown_name_message("family", family, self.families))
        tables = self.manifest["families"][family].get("auxiliary", {})
        if name not in tables:
            raise UnknownTaskError(
                f"family '{family}' has no auxiliary table '{name}'; it has {sorted(tables) or 'none'}."
            )
        return pq.read_table(self._checked(tables[name]["path"])).to_pandas()

    def hgnc(self) -> pd.DataFrame:
        """The HGNC table the data was normalised with (`genebench.symbols.read_hgnc` columns)."""
        return pq.read_table(self._checked("symbols/hgnc.parquet")).to_pandas()

    def descriptions(self, source: str = "refseq") -> Path:
        """Path of a bundled description table (`descriptions/<source>.parquet`)."""
        return self._checked(f"descriptions/{source}.parquet")

    def verify(self) -> None:
        """Check every file of the manifest against its size and sha256."""
        for relative in self.manifest["files"]:
            self._checked(relative)

    def _checked(self, relative: str) -> Path:
        """The path of a manifest file, once its size and sha256 match the manifest."""
        entry = self.manifest["files"].get(relative)
        path = self.path / relative
        if entry is None or not path.is_file() or path.stat().st_size != entry["bytes"]:
            raise SourceFormatError(
                f"data folder '{self.path}': '{relative}' is missing or does not match {MANIFEST} (an interrupted "
                "build?); rebuild it with `genebench build`."
            )
        if file_sha256(path) != entry["sha256"]:
            raise SourceFormatError(
                f"data folder '{self.path}': '{relative}' does not match its sha256 in {MANIFEST} (the file was "
                "changed after the build); rebuild it with `genebench build`."
            )
        return path


_MANIFEST_KEYS = {"families": dict, "files": dict, "data_hash": str}


def read_manifest(folder: Path) -> dict[str, Any]:
    """A data folder's parsed `genebench.json`, checked to hold its families, files and data hash.

    Raises:
        SourceFormatError: the manifest is not valid JSON or lacks a key of the right type.
    """
    where = f"data folder '{folder}': {MANIFEST}"
    try:
        manifest = json.loads((folder / MANIFEST).read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceFormatError(f"{where} is not valid JSON ({exc}; a truncated or edited file?); rebuild the "
                                "folder with `genebench build`.") from exc
    bad = [key for key, kind in _MANIFEST_KEYS.items() if not isinstance(manifest, dict)
           or not isinstance(manifest.get(key), kind)]
    entries_ok = isinstance(manifest, dict) and isinstance(manifest.get("files"), dict) and all(
        isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and isinstance(entry.get("bytes"), int)
        for entry in manifest["files"].values())
    if bad or not entries_ok:
        found = sorted(manifest) if isinstance(manifest, dict) else type(manifest).__name__
        raise SourceFormatError(f"{where}: expected an object with 'families', 'files' (each with sha256 and bytes) "
                                f"and 'data_hash', found {found}; rebuild the folder with `genebench build`.")
    return manifest


def data_hash(manifest: dict[str, Any]) -> str:
    """The data revision of a built folder: a short hash over the sha256s of its built files (the manifest's
    `files`, leaving out the control results computed from them, `controls.files`)."""
    derived = set(manifest.get("controls", {}).get("files", []))
    digests = {name: entry["sha256"] for name, entry in manifest["files"].items() if name not in derived}
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()[:16]


def labels_array(meta: TaskMetadata, rows: pd.DataFrame) -> np.ndarray:
    """Decode the long layout's `labels`/`value` columns into the task's label array (by its type's target)."""
    target = task_type(meta.type).target
    if target == "continuous":
        return rows["value"].to_numpy(dtype=np.float64)
    lists = rows["labels"].to_numpy()
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    if target != "multilabel" and (lengths != 1).any():
        raise SourceFormatError(f"task '{meta.name}': expected one label per row, found rows with "
                                f"{sorted(set(lengths[lengths != 1].tolist()))} labels; rebuild the data.")
    flat = np.concatenate(lists) if len(lists) else np.zeros(0, dtype=object)
    codes = pd.Categorical(flat, categories=list(meta.label_names)).codes.astype(np.int64)
    if (codes < 0).any():
        unknown = sorted(set(flat[codes < 0].astype(str)))
        raise SourceFormatError(f"task '{meta.name}': labels {unknown[:5]} are not among its label names "
                                f"{list(meta.label_names)[:5]}; rebuild the data.")
    if target != "multilabel":
        return codes
    matrix = np.zeros((len(rows), len(meta.label_names)), dtype=np.uint8)
    matrix[np.repeat(np.arange(len(rows)), lengths), codes] = 1
    return matrix


def metadata_from_record(record: dict[str, Any]) -> TaskMetadata:
    """A `TaskMetadata` from one row of a `tasks.parquet`."""
    record = {key: None if isinstance(value, float) and np.isnan(value) else value for key, value in record.items()}
    record["symbol_report"] = json.loads(record["symbol_report"])
    for key in _LISTS:
        record[key] = tuple(record[key])
    return TaskMetadata.model_validate(record)


_LISTS = ("aliases", "entity_types", "label_names")
_INTS = ("min_class_size", "n_entities", "n_folds", "seed")
_NOT_STORED = ("controls",)  # read from the data folder's controls/ results, not from tasks.parquet
TASKS_SCHEMA = pa.schema([
    (name, pa.list_(pa.string()) if name in _LISTS else pa.int64() if name in _INTS
     else pa.float64() if name == "derived_min_prevalence" else pa.string())
    for name in TaskMetadata.model_fields if name not in _NOT_STORED
])
"""The Arrow schema of `tasks.parquet`: one column per `TaskMetadata` field (symbol_report as JSON)."""


def metadata_table(metadata: list[TaskMetadata]) -> pa.Table:
    """Task metadata as an Arrow table in `TASKS_SCHEMA`."""
    return pa.Table.from_pylist([metadata_record(meta) for meta in metadata], schema=TASKS_SCHEMA)


def metadata_record(meta: TaskMetadata) -> dict[str, Any]:
    """One row of a `tasks.parquet` (the inverse of `metadata_from_record`)."""
    record = meta.model_dump(exclude=set(_NOT_STORED))
    record["symbol_report"] = json.dumps(record["symbol_report"], sort_keys=True)
    return record


_SHA256: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, computed once per process for each (path, size, mtime)."""
    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_size, stat.st_mtime_ns)
    if key not in _SHA256:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _SHA256[key] = digest.hexdigest()
    return _SHA256[key]


_OPENED: dict[tuple[str, str | None], BenchmarkData] = {}


def open_data(data: str | Path | None = None, *, revision: str | None = None) -> BenchmarkData:
    """Open built data: a local folder, a Hub dataset id (at `revision`), or by default the bundled snapshot.

    `$GENEBENCH_DATA` overrides the default. Opened folders are cached per (location, revision). The result's
    `.path` is its folder (for the Hub, the local download), `.revision["data_hash"]` the revision id that every
    result records and `genebench run` prints.

    Examples:
        >>> open_data().path.name
        'snapshot'
    """
    location = str(data or os.environ.get(ENV_DATA) or SNAPSHOT_DIR)
    key = (location, revision)
    if key not in _OPENED:
        if Path(location).exists():
            _OPENED[key] = BenchmarkData(location)
        elif data is None:
            raise MissingSourceError(
                f"no genebench data at '{location}'; build it with `genebench build --out DIR` and pass --data DIR."
            )
        else:
            _OPENED[key] = _from_hub(location, revision)
    return _OPENED[key]


def _from_hub(repo_id: str, revision: str | None) -> BenchmarkData:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, HFValidationError, LocalEntryNotFoundError

    from genebench.network import host_of, hub_endpoint, hub_offline, unreachable_reason

    unreachable = "HF_HUB_OFFLINE is set" if hub_offline() else unreachable_reason(hub_endpoint())
    try:  # the Hub unreachable: the local copy only, at once, instead of minutes of retries
        path = snapshot_download(repo_id, repo_type="dataset", revision=revision, local_files_only=bool(unreachable))
    except HFValidationError as exc:
        raise MissingSourceError(
            f"data '{repo_id}': neither a local folder nor a valid Hub dataset id ({exc})."
        ) from exc
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError) as exc:
        where = (f"not downloaded before, and the Hub ({host_of(hub_endpoint())}) cannot be reached ({unreachable})"
                 if unreachable else f"the Hub dataset cannot be fetched ({type(exc).__name__})")
        raise MissingSourceError(
            f"data '{repo_id}': not a local folder, and {where}; check the id and your network, or pass a local "
            "folder."
        ) from exc
    return BenchmarkData(path, hub_id=repo_id, hub_revision=revision)
