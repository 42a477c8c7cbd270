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
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from genebench.constants import ENV_DATA, SNAPSHOT_DIR
from genebench.controls.stored import StoredControls
from genebench.errors import MissingSourceError, SourceFormatError, UnknownTaskError
from genebench.hashing import file_sha256
from genebench.registry import unknown_name_message
from genebench.tasks.metadata import FOLD_SCHEMES, Scheme, TaskMetadata
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
        recomputed = data_hash(self.manifest) if self.manifest.get("format", 1) >= 2 else tables_hash(self.manifest)
        if self.manifest["data_hash"] != recomputed:  # format 1 left the controls out of the data hash
            raise SourceFormatError(
                f"data folder '{self.path}': {MANIFEST} names data_hash {self.manifest['data_hash']!r}, but its file "
                f"hashes give {recomputed!r}; the manifest was edited. Rebuild the folder with `genebench build`."
            )
        self._tables: dict[str, pa.Table] = {}
        self._rows: dict[str, _FamilyRows] = {}
        self._parents: dict[tuple[str, str], Task] = {}  # multi-label parents, decoded once for their derived tasks
        self._by_scheme: dict[str, dict[str, TaskMetadata]] = {}

    # -- what the folder holds -----------------------------------------------------------------------------

    @property
    def families(self) -> list[str]:
        """Families built into this folder."""
        return sorted(self.manifest["families"])

    @property
    def data_hash(self) -> str:
        """The hash of the built files (the manifest's `data_hash`): the id results, the card and the leaderboard
        name this data by."""
        return str(self.manifest["data_hash"])

    @property
    def provenance(self) -> dict[str, Any]:
        """Where this data came from, as results record it (`TaskResult.provenance`): its `data_hash`, task count,
        Hub id and Hub revision, and source versions per family."""
        return {
            "data_hash": self.data_hash,
            "n_tasks": len(self._metadata),
            "hub_id": self.hub_id,
            "hub_revision": self.hub_revision,
            "sources": {name: fam["source_versions"] for name, fam in self.manifest["families"].items()},
        }

    @cached_property
    def _metadata(self) -> dict[str, TaskMetadata]:
        """Every task's metadata as built, without control scores."""
        tasks: dict[str, TaskMetadata] = {}
        for family in self.families:
            for record in pq.read_table(self._checked(f"{family}/tasks.parquet")).to_pylist():
                tasks[record["name"]] = metadata_from_record(record)
        return tasks

    @cached_property
    def stored_controls(self) -> StoredControls:
        """The folder's stored controls (`genebench.controls.stored`); none when they were scored on other data (a
        family rebuilt since, with a warning)."""
        controls = self.manifest.get("controls", {})
        manifest = self.manifest
        if controls and controls.get("data_hash") != tables_hash(self.manifest):
            logger.warning("data folder '%s': its controls were scored on other data, so they are ignored; rerun "
                           "`genebench controls --data %s`.", self.path, self.path)
            manifest = {key: value for key, value in self.manifest.items() if key != "controls"}
        return StoredControls(self.path, manifest, self._checked)

    @property
    def control_table(self) -> pd.DataFrame:
        """The folder's control table (`genebench.controls.stored.CONTROL_SCORES_SCHEMA`), hash-checked."""
        return self.stored_controls.table

    def controls(self, scheme: Scheme = "paper") -> dict[str, dict[str, float]]:
        """Task -> control -> main score under fold scheme `scheme` (`genebench.controls`); a control that could not
        score a task is left out of its entry."""
        return self.stored_controls.scores(_scheme(scheme))

    def _scheme_metadata(self, scheme: Scheme) -> dict[str, TaskMetadata]:
        scheme = _scheme(scheme)
        if scheme not in self._by_scheme:
            controls = self.controls(scheme)
            self._by_scheme[scheme] = {name: meta.model_copy(update={"controls": controls.get(name, {})})
                                      for name, meta in self._metadata.items()}
            if scheme == "family":  # family folds are verified before the first use of the scheme
                try:
                    self._verify_family_folds()
                except SourceFormatError:
                    del self._by_scheme[scheme]
                    raise
        return self._by_scheme[scheme]

    def _verify_family_folds(self) -> None:
        """Refuse family folds that do not hold the families of the data's HGNC table out, or whose unscorable marks
        do not follow from them (`genebench.tasks.folds.family_fold_problem`)."""
        from genebench.tasks.families import gene_families
        from genebench.tasks.folds import family_fold_problem

        families = gene_families(self.hgnc()) if "symbols/hgnc.parquet" in self.manifest["files"] else None
        for name in self._metadata:
            paper = self.load_task(name).fold_ids
            if problem := family_fold_problem(self.load_task(name, "family"), paper, families):
                raise SourceFormatError(f"data folder '{self.path}': task '{name}': family folds refused: {problem}; "
                                        "the data was changed after the build, rebuild it with `genebench build`.")

    @cached_property
    def _aliases(self) -> dict[str, str]:
        return {alias: meta.name for meta in self._metadata.values() for alias in meta.aliases}

    def tasks(self, scheme: Scheme = "paper") -> list[TaskMetadata]:
        """Metadata of every task, in family then build order, with the control scores of fold scheme `scheme`."""
        return list(self._scheme_metadata(scheme).values())

    def metadata(self, name: str, scheme: Scheme = "paper") -> TaskMetadata:
        """One task's metadata, with the control scores of fold scheme `scheme`; an old name resolves with a warning,
        an unknown one suggests close names."""
        by_name = self._scheme_metadata(scheme)
        if name in by_name:
            return by_name[name]
        if name in self._aliases:
            current = self._aliases[name]
            warnings.warn(f"task '{name}' is now called '{current}'.", UserWarning, stacklevel=3)
            return by_name[current]
        raise UnknownTaskError(unknown_name_message("task", name, [*by_name, *self._aliases]))

    def control_predictions(self, task_name: str, scheme: Scheme = "paper") -> dict[str, np.ndarray]:
        """Each stored control's held-out scores per row of `load_task(task_name, scheme)`, as float32 (read them
        checked against their stored scores with `genebench.controls.covered.stored_predictions`).

        Shape (n_rows,) for binary and pair tasks, (n_rows, n_labels) for multi-label and categorical ones (columns
        in `label_names` order); NaN where the control could not score a row. Values are logits (binary and
        multi-label columns) or log-probabilities (categorical classes): monotone in the held-out probability. A
        derived task gets its parent's column. Seeded controls (`random`) are stored as scores only.
        """
        meta = self.metadata(task_name, scheme)
        return self.stored_controls.predictions(meta, _scheme(scheme))

    # -- rows ----------------------------------------------------------------------------------------------

    def table(self, family: str) -> pd.DataFrame:
        """All rows of a family in the long layout (task, entity, entity_2, labels, value, fold, family_fold)."""
        table = self._table(family)
        return table.cast(pa.schema([field.with_type(field.type.value_type) if pa.types.is_dictionary(field.type)
                                     else field for field in table.schema])).to_pandas()

    def _table(self, family: str) -> pa.Table:
        """A family's split files as one Arrow table (its `_ENCODED` columns dictionary-encoded), each file read
        (and checked) once per `BenchmarkData`."""
        if family not in self.manifest["families"]:
            raise UnknownTaskError(unknown_name_message("family", family, self.families))
        if family not in self._tables:
            files = [f"{family}/{split}.parquet" for split in self.manifest["families"][family]["splits"]]
            self._tables[family] = pa.concat_tables([pq.read_table(self._checked(f), read_dictionary=_ENCODED)
                                                     for f in files])
        return self._tables[family]

    def load_task(self, name: str, scheme: Scheme = "paper") -> Task:
        """A task's entities, labels and fold ids as numpy arrays of its own (see `Task`).

        Args:
            name: the task (or an alias).
            scheme: "paper" (the `fold` column) or "family" (`family_fold`: gene families held out; equal to `fold`
                for pair and train-test tasks). The metadata carries that scheme's control scores.
        """
        meta = self.metadata(name, scheme)
        if meta.is_derived:
            key = (meta.parent, _scheme(scheme))
            if key not in self._parents:
                self._parents[key] = self.load_task(meta.parent, scheme)
            parent = self._parents[key]
            column = parent.metadata.label_names.index(meta.label_names[1])
            return Task(meta, parent.entities, parent.labels[:, column].astype(np.int64), parent.fold_ids)
        if meta.family not in self._rows:
            self._rows[meta.family] = _FamilyRows.of(self._table(meta.family))
        family, column = self._rows[meta.family], FOLD_COLUMNS[_scheme(scheme)]
        if column not in family.fold_ids:
            raise SourceFormatError(f"data folder '{self.path}': family '{meta.family}' has no '{column}' column "
                                    f"(built by an older genebench); rebuild it with `genebench build`.")
        rows = family.rows.get(meta.name, np.zeros(0, dtype=np.intp))
        entities = np.stack([family.entity[rows], family.entity_2[rows]], axis=1) if len(meta.entity_types) == 2 \
            else family.entity[rows]
        return Task(meta, entities, family.labels(meta, rows), family.fold_ids[column][rows].astype(np.int64))

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

    @cached_property
    def gene_families(self) -> dict[str, str]:
        """Symbol -> gene family of every gene of `hgnc()` (`genebench.tasks.families`): the units family folds hold
        out, and added over names' bootstrap resamples."""
        from genebench.tasks.families import gene_families

        return gene_families(self.hgnc())

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


FOLD_COLUMNS: dict[str, str] = {"paper": "fold", "family": "family_fold"}
"""Fold scheme -> the long layout's column that holds it."""


def _scheme(scheme: str) -> str:
    """`scheme`, once it names a fold scheme.

    Raises:
        ValueError: it does not.
    """
    if scheme not in FOLD_SCHEMES:
        raise ValueError(f"scheme: expected one of {list(FOLD_SCHEMES)}, found {scheme!r}.")
    return scheme


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
    """The data revision of a built folder: a short hash over the sha256s of every file of the manifest, the stored
    controls included (a control's edited prediction changes the revision as an edited label does)."""
    return _hash_of({name: entry["sha256"] for name, entry in manifest["files"].items()})


def tables_hash(manifest: dict[str, Any]) -> str:
    """A short hash over the sha256s of the built files the controls are computed from (every file but the controls'
    own): what the controls record as the data they were scored on."""
    derived = set(manifest.get("controls", {}).get("files", []))
    return _hash_of({name: entry["sha256"] for name, entry in manifest["files"].items() if name not in derived})


def _hash_of(digests: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()[:16]


_ENCODED = ("task", "entity", "entity_2")
"""The long layout's columns read dictionary-encoded, as they are stored: each distinct value is decoded once."""


def _decoded(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A string column as (codes, values), `values[codes]` being the column as numpy objects (None for null), each
    distinct value made into a Python object once."""
    encoded = column.combine_chunks()
    if not pa.types.is_dictionary(encoded.type):
        encoded = encoded.dictionary_encode()
    values = np.append(encoded.dictionary.to_numpy(zero_copy_only=False), None)
    return encoded.indices.fill_null(len(values) - 1).to_numpy(), values


@dataclass(frozen=True, eq=False)
class _FamilyRows:
    """A family's long-layout table decoded once for all its tasks and fold schemes.

    Attributes:
        rows: task -> its row numbers, in file order.
        entity, entity_2: each row's entities, shape (n_rows,) of str (None where absent).
        label_codes, label_values: every row's labels, flattened, as codes into `label_values` (str).
        label_starts, label_counts: where each row's labels begin in `label_codes`, and how many it has.
        value: each row's continuous target (float64).
        fold_ids: fold column (`FOLD_COLUMNS`' values) -> each row's fold, for the columns the table has.
    """

    rows: dict[str, np.ndarray]
    entity: np.ndarray
    entity_2: np.ndarray
    label_codes: np.ndarray
    label_values: np.ndarray
    label_starts: np.ndarray
    label_counts: np.ndarray
    value: np.ndarray
    fold_ids: dict[str, np.ndarray]

    @classmethod
    def of(cls, table: pa.Table) -> _FamilyRows:
        """Decode a family's table (`BenchmarkData.table`'s columns)."""
        task_codes, task_names = _decoded(table["task"])
        order = np.argsort(task_codes, kind="stable")
        ends = np.cumsum(np.bincount(task_codes, minlength=len(task_names)))
        counts = pc.list_value_length(table["labels"]).fill_null(0).to_numpy().astype(np.int64)
        label_codes, label_values = _decoded(pc.list_flatten(table["labels"]))
        (entity_codes, entities), (partner_codes, partners) = _decoded(table["entity"]), _decoded(table["entity_2"])
        return cls(rows=dict(zip(task_names[:-1].tolist(), np.split(order, ends[:-1]))), entity=entities[entity_codes],
                   entity_2=partners[partner_codes], label_codes=label_codes, label_values=label_values,
                   label_starts=np.cumsum(counts) - counts, label_counts=counts,
                   value=table["value"].to_numpy().astype(np.float64),
                   fold_ids={c: table[c].to_numpy() for c in FOLD_COLUMNS.values() if c in table.column_names})

    def labels(self, meta: TaskMetadata, rows: np.ndarray) -> np.ndarray:
        """The label array of `meta`'s task on `rows` (by its type's target): class indices into its label names,
        a multi-hot uint8 matrix (multi-label), or float targets.

        Raises:
            SourceFormatError: a row holds other than one label where one is expected, or a label the task lacks.
        """
        kind = task_type(meta.type)
        if not kind.is_classification:
            return self.value[rows]
        counts = self.label_counts[rows]
        if not kind.is_multilabel and (counts != 1).any():
            raise SourceFormatError(f"task '{meta.name}': expected one label per row, found rows with "
                                    f"{sorted(set(counts[counts != 1].tolist()))} labels; rebuild the data.")
        firsts = np.cumsum(counts) - counts  # where each row's labels begin among the task's
        flat = self.label_codes[np.arange(counts.sum()) + np.repeat(self.label_starts[rows] - firsts, counts)]
        index = {name: i for i, name in enumerate(meta.label_names)}
        codes = np.array([index.get(value, -1) for value in self.label_values], dtype=np.int64)[flat]
        if (codes < 0).any():
            unknown = sorted({str(value) for value in self.label_values[flat[codes < 0]]})
            raise SourceFormatError(f"task '{meta.name}': labels {unknown[:5]} are not among its label names "
                                    f"{list(meta.label_names)[:5]}; rebuild the data.")
        if not kind.is_multilabel:
            return codes
        matrix = np.zeros((len(rows), len(meta.label_names)), dtype=np.uint8)
        matrix[np.repeat(np.arange(len(rows)), counts), codes] = 1
        return matrix


def metadata_from_record(record: dict[str, Any]) -> TaskMetadata:
    """A `TaskMetadata` from one row of a `tasks.parquet`."""
    record = {key: None if isinstance(value, float) and np.isnan(value) else value for key, value in record.items()}
    for key in _JSONS:
        record[key] = json.loads(record[key]) if record.get(key) else {}
    for key in _LISTS:
        record[key] = tuple(record[key])
    return TaskMetadata.model_validate(record)


_LISTS = ("aliases", "entity_types", "label_names")
_JSONS = ("symbol_report", "family_report", "incomplete_labels", "dropped_labels")
_INTS = ("min_class_size", "n_entities", "n_folds", "seed")
_NOT_STORED = ("controls",)  # read from the data folder's control table, not from tasks.parquet
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
    for key in _JSONS:
        record[key] = json.dumps(record[key], sort_keys=True)
    return record


_OPENED: dict[tuple[str, str | None], BenchmarkData] = {}


def open_data(data: str | Path | None = None, *, hub_revision: str | None = None) -> BenchmarkData:
    """Open built data: a local folder, a Hub dataset id (at `hub_revision`: a branch, tag or commit of the Hub
    repository), or by default the bundled snapshot.

    `$GENEBENCH_DATA` overrides the default. Opened folders are cached per (location, hub_revision). The result's
    `.path` is its folder (for the Hub, the local download), `.data_hash` the id that every
    result records and `genebench run` prints.

    Examples:
        >>> open_data().path.name
        'snapshot'
    """
    location = str(data or os.environ.get(ENV_DATA) or SNAPSHOT_DIR)
    key = (location, hub_revision)
    if key not in _OPENED:
        path = Path(location)
        if (path / "__init__.py").is_file() or ("/" not in location and not path.exists()):
            raise MissingSourceError(  # "genebench", as a Hugging Face user types it first: never asked of the Hub
                f"data '{location}': not a data folder or Hub id ORG/NAME; leave it out for the bundled snapshot "
                '(in datasets: load_dataset(str(genebench.open_data().path), "reactome")).'
            )
        if path.exists():
            _OPENED[key] = BenchmarkData(location)
        elif data is None:
            raise MissingSourceError(
                f"no genebench data at '{location}'; build it with `genebench build --out DIR` and pass --data DIR."
            )
        else:
            _OPENED[key] = _from_hub(location, hub_revision)
    return _OPENED[key]


def _from_hub(repo_id: str, hub_revision: str | None) -> BenchmarkData:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, HFValidationError, LocalEntryNotFoundError

    from genebench.network import host_of, hub_endpoint, hub_offline, unreachable_reason

    unreachable = "HF_HUB_OFFLINE is set" if hub_offline() else unreachable_reason(hub_endpoint())
    try:  # the Hub unreachable: the local copy only, at once, instead of minutes of retries
        path = snapshot_download(repo_id, repo_type="dataset", revision=hub_revision,
                                 local_files_only=bool(unreachable))
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
    return BenchmarkData(path, hub_id=repo_id, hub_revision=hub_revision)
