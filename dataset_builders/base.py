"""What every task family shares: sources, symbol normalisation, labels, folds and the long row layout.

A family module declares its sources and `TaskSpec`s and implements one method, `read_tasks`, which parses
its downloaded files into `RawTask`s. `FamilyBuilder` does the rest: it fetches each source (a URL through
the datasets DownloadManager, or a local override), normalises symbols to current HGNC, resolves duplicate
and conflicting rows, drops classes below the task's minimum, derives one binary task per frequent label,
assigns seeded folds, and yields one row per (task, entity) with the rows' fold as their split.

**Integrity rules.** A family states, as data (`FamilyBuilder.RULES`), the relations its source's structure
promises between label gene sets (a parent and its descendants), and checks them in `check_rules` while reading;
a rule broken beyond its tolerance ends the build in one line naming the source, the rule and the first examples.
Every family's tasks are checked against two more rules on their built labels: no label keeps fewer positives
than the task's minimum class size (`check_min_class_size`), and no two labels of a multi-label task hold the same
genes (the later one is dropped, recorded in `dropped_labels`; `drop_identical_labels`).
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import datasets
import numpy as np
import pandas as pd

from genebench.constants import DEFAULT_SEED, HGNC_URL, N_FOLDS
from genebench.errors import MissingSourceError, SourceFormatError
from genebench.hashing import file_sha256
from genebench.partners import PartnerRecipe
from genebench.symbols import SymbolMapper
from genebench.tasks.audit import merge_near_duplicates
from genebench.tasks.families import families_of, gene_families
from genebench.tasks.folds import assign_folds, cold_gene_folds, family_folds, family_unscorable, fold_imbalance
from genebench.tasks.metadata import TaskMetadata, TaskSpec
from genebench.tasks.task import TRAIN_ONLY
from genebench.tasks.types import task_type
from genebench.textfiles import open_text

logger = logging.getLogger(__name__)

FEATURES = datasets.Features({
    "task": datasets.Value("string"),
    "entity": datasets.Value("string"),
    "entity_2": datasets.Value("string"),
    "labels": datasets.List(datasets.Value("string")),
    "value": datasets.Value("float64"),
    "fold": datasets.Value("int8"),
    "family_fold": datasets.Value("int8"),
})
"""The long layout shared by every family: one row per (task, entity); `family_fold` holds the family-held-out
folds (`genebench.tasks.folds` step 6), equal to `fold` for pair and train-test tasks."""

TRAIN_TEST_SPLITS = ("train", "test")


class NothingToScoreError(SourceFormatError):
    """A declared task that this source leaves without a scorable label; it is skipped and reported."""


@dataclass(frozen=True)
class Source:
    """One input file of a family.

    Attributes:
        url: the default, live location.
        version: the release it names (`"current"` when the URL always serves the newest).
        local_names: glob patterns that find the file in a `--sources DIR` (in DIR/<family>/ or DIR/).
        sha256: checksum verified after a download, for versioned URLs.
        is_dir: the source is a folder (e.g. a parquet directory of part files), given locally.
    """

    url: str
    version: str
    local_names: tuple[str, ...]
    sha256: str | None = None
    is_dir: bool = False


HGNC_SOURCE = Source(url=HGNC_URL, version="current", local_names=("hgnc_complete_set*",))

Relation = Literal["a parent's genes are not just its descendants' union", "a child's genes are mostly its parent's",
                   "a parent's genes include its descendants'"]
CHILD_IN_PARENT = 0.5
"""'A child's genes are mostly its parent's': at least this share of them."""


@dataclass(frozen=True)
class Rule:
    """A relation between a source's label gene sets that the source's structure promises.

    Attributes:
        relation: the relation, checked over every parent (or parent-child pair) the source records both sides of.
        tolerance: the share of the parents (pairs) checked that may break it; breaks within it become task notes.
        remedy: what to do when it breaks, for the error line.
    """

    relation: Relation
    tolerance: float = 0.0
    remedy: str = ""


@dataclass
class RawTask:
    """A task as its family parsed it, before normalisation.

    `rows` has a column `entity` (symbols, or identifiers named by `entity_id`), optionally `entity_2`,
    and `label` (a class name; a list of names for multi-label tasks) or `value` (regression), plus
    `split` ("train"/"test") for train-test tasks.

    `keep_rows=True` keeps every published row exactly (PerturbQA): symbols are still renamed to current HGNC,
    but a symbol HGNC cannot resolve is kept as published (counted as `n_kept_unresolved` in the symbol report),
    and no row is merged, dropped as a conflict, or dropped below the minimum class size.
    """

    spec: TaskSpec
    rows: pd.DataFrame
    source_key: str
    label_names: tuple[str, ...] = ()
    entity_id: str = "symbol"
    notes: list[str] = field(default_factory=list)
    keep_rows: bool = False
    dropped_labels: dict[str, str] = field(default_factory=dict)


@dataclass
class FamilyRead:
    """What reading a family's sources gives (`FamilyBuilder.read_family`).

    Attributes:
        rows: one row per (task, entity) in the long layout (`FEATURES`).
        tasks: the metadata of every built task, derived ones included.
        auxiliary: tables besides task rows (`<family>/<name>.parquet`), e.g. opentargets' diseases.
        skipped_tasks: declared tasks the sources cannot give -> why.
        sources: the sources read (those of the configured release).
        source_versions: source key -> the version read (local copies named).
        hgnc: the HGNC table symbols were normalised with.
        families: symbol -> family key of every HGNC gene (`genebench.tasks.families.gene_families`).
    """

    sources: dict[str, Source]
    source_versions: dict[str, str]
    hgnc: pd.DataFrame
    families: dict[str, str] = field(default_factory=dict)
    rows: pd.DataFrame = field(default_factory=pd.DataFrame)
    tasks: list[TaskMetadata] = field(default_factory=list)
    auxiliary: dict[str, pd.DataFrame] = field(default_factory=dict)
    skipped_tasks: dict[str, str] = field(default_factory=dict)


@dataclass
class FamilyConfig(datasets.BuilderConfig):
    """Options every family shares.

    Args:
        sources_dir: a folder of local source files that override the URLs (searched as DIR/<family>/ and DIR/).
        hgnc: URL or local path of HGNC's complete set, used to normalise symbols.
        seed: seed of the fold assignment.
        n_folds: number of cross-validation folds.
        source_overrides: source key -> URL or local path, overriding single sources.
    """

    sources_dir: str | None = None
    hgnc: str | None = None
    seed: int = DEFAULT_SEED
    n_folds: int = N_FOLDS
    source_overrides: dict[str, str] = field(default_factory=dict)


class FamilyBuilder(datasets.GeneratorBasedBuilder):
    """Base class of the task family builders."""

    BUILDER_CONFIG_CLASS = FamilyConfig
    FAMILY: ClassVar[str]
    CITATION: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    HOMEPAGE: ClassVar[str]
    LICENSE: ClassVar[str]
    SOURCES: ClassVar[dict[str, Source]]
    TASKS: ClassVar[tuple[TaskSpec, ...]]
    DIFFERENCES: ClassVar[str] = ""
    """How this family's tasks differ from the reference's, and which source release explains it (for the card)."""
    PARTNERS: ClassVar[PartnerRecipe | None] = None
    """How the family's non-gene pair partners get vectors (`genebench.partners`), written into the manifest."""
    SPLITS: ClassVar[str] = "cv"
    """`cv` (splits fold_0..fold_{k-1}) or `train-test` (PerturbQA's published split)."""
    RULES: ClassVar[tuple[Rule, ...]] = ()
    """The relations the family's source promises between its label gene sets (`check_rules`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "FAMILY" in cls.__dict__:
            cls.BUILDER_CONFIGS = [cls.BUILDER_CONFIG_CLASS(name=cls.FAMILY, version=datasets.Version("1.0.0"),
                                                            description=cls.DESCRIPTION.strip().splitlines()[0])]
            cls.DEFAULT_CONFIG_NAME = cls.FAMILY

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description=self.DESCRIPTION,
            features=FEATURES,
            homepage=self.HOMEPAGE,
            license=self.LICENSE,
            citation=self.CITATION,
        )

    def sources(self) -> dict[str, Source]:
        """The sources this build reads: `SOURCES`, or those of the configured release (families with releases
        override this)."""
        return self.SOURCES

    def split_names(self) -> list[tuple[str, int]]:
        """(split name, fold code) of each split: fold_0..fold_{k-1}, or PerturbQA's train and test."""
        if self.SPLITS == "cv":
            return [(f"fold_{k}", k) for k in range(self.config.n_folds)]
        return list(zip(TRAIN_TEST_SPLITS, (TRAIN_ONLY, 0)))

    def read_family(self, dl_manager: datasets.DownloadManager) -> FamilyRead:
        """Fetch the sources and build every task: rows, metadata, auxiliary tables and source versions.

        Nothing is kept on the builder, so a builder whose splits come from a warm `datasets` cache (where
        `_split_generators` never runs) loses nothing.
        """
        sources = self.sources()
        paths = {key: self._fetch(dl_manager, key, source) for key, source in sources.items()}
        mapper = SymbolMapper.from_file(self._fetch(dl_manager, "hgnc", HGNC_SOURCE))
        versions = {key: self._source_version(key, source) for key, source in sources.items()}
        read = FamilyRead(sources=sources, source_versions={**versions, "hgnc": mapper.version}, hgnc=mapper.table,
                          families=gene_families(mapper.table))
        frames = []
        for raw in self.read_tasks(paths, mapper, read):
            try:
                rows, metadata = self._materialise(raw, mapper, read)
            except NothingToScoreError as exc:
                read.skipped_tasks[raw.spec.name] = str(exc)
                logger.warning("%s: skipped '%s': %s", self.FAMILY, raw.spec.name, exc)
                continue
            frames.append(rows)
            read.tasks.extend(metadata)
        read.rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(FEATURES))
        return read

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        rows = self.read_family(dl_manager).rows
        return [datasets.SplitGenerator(name=name, gen_kwargs={"rows": rows[rows["fold"] == code]})
                for name, code in self.split_names()]

    def _generate_examples(self, rows: pd.DataFrame) -> Iterator[tuple[str, dict[str, Any]]]:
        for record in rows[list(FEATURES)].to_dict("records"):
            yield f"{record['task']}|{record['entity']}|{record['entity_2']}", record

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        """Parse the family's source files into raw tasks; tables besides task rows go in `read.auxiliary`, declared
        tasks the sources cannot give in `read.skipped_tasks`. Families implement this."""
        raise NotImplementedError

    # -- sources -----------------------------------------------------------------------------------------

    def _fetch(self, dl_manager: datasets.DownloadManager, key: str, source: Source) -> Path:
        override = self.config.source_overrides.get(key) or (self.config.hgnc if key == "hgnc" else None)
        if override is None and self.config.sources_dir:
            override = self._find_local(key, source)
        location = override or source.url
        if not _is_url(location):
            path = Path(location)
            if not (path.is_dir() if source.is_dir else path.is_file()):
                kind = "folder" if source.is_dir else "file"
                raise MissingSourceError(
                    f"{self.FAMILY} source '{key}': local {kind} '{path}' does not exist; pass an existing {kind} "
                    f"or leave it unset to download {source.url}."
                )
            return path
        if source.is_dir:
            raise MissingSourceError(
                f"{self.FAMILY} source '{key}' is a folder of part files ({location}) that cannot be fetched as one "
                f"download; mirror it (e.g. `wget -r -np {location}`) and pass --sources DIR with DIR/{self.FAMILY}/"
                f"{source.local_names[0]}."
            )
        try:
            path = Path(dl_manager.download(location))
        except Exception as exc:  # noqa: BLE001 - the download stack raises many unrelated types
            raise MissingSourceError(
                f"{self.FAMILY} source '{key}': cannot download {location} ({type(exc).__name__}: {exc}); "
                f"check the network, or pass --sources DIR with a local copy ({', '.join(source.local_names)})."
            ) from exc
        if source.sha256 and location == source.url and file_sha256(path) != source.sha256:
            raise SourceFormatError(
                f"{self.FAMILY} source '{key}': {location} does not match its pinned sha256 {source.sha256[:12]}…; "
                "the download is corrupt or the release changed. Delete the download cache and retry."
            )
        return path

    def local_candidates(self, key: str, source: Source) -> list[Path]:
        """Every file in `--sources DIR` that could be this source, best (newest name) first."""
        if not self.config.sources_dir:
            return []
        root = Path(self.config.sources_dir)
        for folder in (root / ("hgnc" if key == "hgnc" else self.FAMILY), root):
            for pattern in source.local_names:
                found = sorted((p for p in folder.glob(pattern) if (p.is_dir() if source.is_dir else p.is_file())),
                               reverse=True)
                if found:
                    return [self._inside(path, root) for path in found]
        return []

    def _inside(self, path: Path, root: Path) -> Path:
        """`path`, once it is certain that it (through any link) lies inside the sources folder `root`."""
        target = path.resolve()
        if not target.is_relative_to(root.resolve()):
            raise SourceFormatError(
                f"{self.FAMILY} source '{path}': a link to '{target}', outside the sources folder '{root}'; copy the "
                "file into the folder instead of linking to it."
            )
        return path

    def _find_local(self, key: str, source: Source) -> str | None:
        found = self.local_candidates(key, source)
        if found:
            return str(found[0])
        if key == "hgnc":
            return None
        root = Path(self.config.sources_dir)
        family_dir = self.FAMILY
        raise MissingSourceError(
            f"{self.FAMILY} source '{key}': no file matching {list(source.local_names)} in {root / family_dir} or "
            f"{root}; add it there or drop --sources to download {source.url}."
        )

    def _source_version(self, key: str, source: Source) -> str:
        override = self.config.source_overrides.get(key)
        if override is None and self.config.sources_dir:
            override = self._find_local(key, source)
        if override and not _is_url(override):
            return f"{source.version} (local: {Path(override).name})"
        return source.version

    # -- materialising tasks ------------------------------------------------------------------------------

    def _materialise(self, raw: RawTask, mapper: SymbolMapper, read: FamilyRead
                     ) -> tuple[pd.DataFrame, list[TaskMetadata]]:
        spec, rows = raw.spec, raw.rows.copy()
        n_raw = len(rows)
        rows, symbol_report = _normalise(rows, spec, raw.entity_id, mapper, keep_unresolved=raw.keep_rows)
        kind = task_type(spec.type)
        multilabel = kind.is_multilabel
        if "entity_2" not in rows:
            rows["entity_2"] = None
        if raw.keep_rows:
            label_names = raw.label_names or tuple(sorted(set(rows["label"])))
            rows, n_conflicts, dropped, identical = rows.assign(_key=np.arange(len(rows)).astype(str)), 0, 0, {}
            _check_declared(rows, spec, label_names)
        else:
            key = rows["entity"] + "\t" + rows["entity_2"].fillna("")
            if kind.unordered_pairs:
                low = np.minimum(rows["entity"], rows["entity_2"].fillna(""))
                key = low + "\t" + np.maximum(rows["entity"], rows["entity_2"].fillna(""))
            rows = rows.assign(_key=key)
            rows, n_conflicts = _deduplicate(rows, multilabel=multilabel, regression=not kind.is_classification)
            rows, label_names, dropped = _apply_min_class_size(rows, spec, raw.label_names)
            rows, label_names, identical = self._checked_labels(rows, spec, label_names)
        if multilabel and not label_names:
            raise NothingToScoreError(f"no label has {spec.min_class_size} genes with it and {spec.min_class_size} "
                                      "without it in this source.")
        n_cross_group = 0
        if spec.fold_scheme == "cold genes":
            folds = cold_gene_folds(rows["entity"].to_numpy(), rows["entity_2"].to_numpy(), n_folds=self.config.n_folds,
                                    seed=self.config.seed, task_name=spec.name)
            n_cross_group = int((folds < 0).sum())
            rows, folds = rows[folds >= 0].reset_index(drop=True), folds[folds >= 0]
        elif spec.evaluation == "cv":
            folds = assign_folds(rows["_key"].to_numpy(), _strata(rows, spec, label_names), multilabel=multilabel,
                                 n_folds=self.config.n_folds, seed=self.config.seed, task_name=spec.name)
        else:
            unknown = sorted(set(rows["split"]) - set(TRAIN_TEST_SPLITS))
            if unknown:
                raise SourceFormatError(
                    f"{self.FAMILY} task '{spec.name}': unexpected split values {unknown}; expected 'train' or 'test'."
                )
            folds = np.where(rows["split"] == "test", 0, TRAIN_ONLY)
        report = {**symbol_report, "n_source_rows": n_raw, "n_conflicting": n_conflicts, "n_below_min_class": dropped}
        if spec.fold_scheme == "cold genes":
            report["n_cross_group"] = n_cross_group
        logger.info("%s: %d rows (from %d source rows; %s)", spec.name, len(rows), n_raw, report)
        metadata = self._metadata(raw, label_names, len(rows), report, read, {**raw.dropped_labels, **identical})
        by_family = folds
        if spec.has_family_folds:
            families = families_of(rows["entity"], read.families)
            strata = _strata(rows, spec, label_names)
            by_family = family_folds(rows["_key"].to_numpy(), families, strata, multilabel=multilabel,
                                     n_folds=self.config.n_folds, seed=self.config.seed, task_name=spec.name)
            metadata = _with_family_report(metadata, families, _class_matrix(rows, spec, label_names), by_family)
        out = pd.DataFrame({
            "task": spec.name,
            "entity": rows["entity"].to_numpy(),
            "entity_2": rows["entity_2"].to_numpy(),
            "labels": _labels_column(rows, spec),
            "value": rows["value"].to_numpy(dtype=float) if "value" in rows else None,
            "fold": np.asarray(folds, dtype=np.int8),
            "family_fold": np.asarray(by_family, dtype=np.int8),
        })
        derived = []
        if multilabel and spec.derived_min_prevalence is not None:
            hot = _multi_hot(rows["label"], label_names)
            prevalence = hot.mean(axis=0)
            columns = [column for column, share in enumerate(prevalence)  # a label (nearly) every gene has leaves
                       if share >= spec.derived_min_prevalence and (1 - share) * len(rows) >= spec.min_class_size]
            derived = merge_near_duplicates([
                _with_family_report(metadata.model_copy(update={
                    "name": f"{spec.name};{label_names[column]}", "type": "derived binary", "parent": spec.name,
                    "aliases": (), "dropped_labels": {},
                    "label_names": (f"not {label_names[column]}", label_names[column]),
                    "derived_min_prevalence": None, "description": f"{label_names[column]} vs the rest of "
                    f"'{spec.name}' (prevalence {prevalence[column]:.1%}).",
                }), families, np.eye(2)[hot[:, column]], by_family)
                for column in columns
            ], hot[:, columns])  # too few negatives to score
        return out, [metadata, *derived]

    def _checked_labels(self, rows: pd.DataFrame, spec: TaskSpec, names: tuple[str, ...]
                        ) -> tuple[pd.DataFrame, tuple[str, ...], dict[str, str]]:
        """The rules of every family on a task's built labels: none below the minimum class size (an error), and
        of labels with one gene set only the first (the others dropped: rows, names, and the dropped -> why)."""
        check_min_class_size(self.FAMILY, spec, _class_matrix(rows, spec, names), names)
        if not task_type(spec.type).is_multilabel:
            return rows, names, {}
        identical = drop_identical_labels(rows, names)
        if not identical:
            return rows, names, {}
        rows = rows.assign(label=[[x for x in labels if x not in identical] for labels in rows["label"]])
        return rows, tuple(name for name in names if name not in identical), identical

    def _metadata(self, raw: RawTask, label_names: tuple[str, ...], n_rows: int, report: dict,
                  read: FamilyRead, dropped: dict[str, str]) -> TaskMetadata:
        source = read.sources[raw.source_key]
        notes = " ".join([raw.spec.notes, *raw.notes]).strip()
        return TaskMetadata(
            **{**raw.spec.model_dump(), "notes": notes},
            family=self.FAMILY,
            label_names=label_names,
            n_entities=n_rows,
            n_folds=self.config.n_folds if raw.spec.evaluation == "cv" else 1,
            seed=self.config.seed,
            source_url=source.url,
            source_version=read.source_versions[raw.source_key],
            license=self.LICENSE,
            citation=self.CITATION.strip(),
            hgnc_version=read.source_versions["hgnc"],
            symbol_report=report,
            dropped_labels=dict(sorted(dropped.items())),
        )


# -- pure helpers, also used by tests -----------------------------------------------------------------------


def check_rules(family: str, source: str, rules: Iterable[Rule], sets: dict[str, set[str]],
                below: dict[str, frozenset[str]]) -> list[str]:
    """Check a source's label gene sets against the rules its family states.

    Args:
        family: the family, for the error line.
        source: the source file, for the error line.
        rules: the rules (`FamilyBuilder.RULES`).
        sets: label -> its genes, as the source records them.
        below: parent label -> its descendants (the labels the rules relate to it).

    Returns:
        One note per rule broken within its tolerance, naming the labels that break it.

    Raises:
        SourceFormatError: a rule is broken beyond its tolerance.
    """
    notes = []
    for rule in rules:
        checked, broken = _relation(rule.relation, sets, below)
        if not broken:
            continue
        share = len(broken) / checked
        summary = f"{len(broken)} of {checked} checked, e.g. {'; '.join(broken[:3])}"
        if share > rule.tolerance:
            raise SourceFormatError(f"{family} source '{source}' breaks the rule \"{rule.relation}\" ({summary}); "
                                    f"{rule.remedy}")
        notes.append(f"Rule \"{rule.relation}\" broken within its tolerance ({rule.tolerance:.0%}): {summary}.")
    return notes


def _relation(relation: Relation, sets: dict[str, set[str]], below: dict[str, frozenset[str]]
              ) -> tuple[int, list[str]]:
    """(how many parents or pairs the relation was checked on, the breaking ones in words, in label order)."""
    checked, broken = 0, []
    for parent in sorted(below):
        recorded = sorted(d for d in below[parent] if sets.get(d))
        if not sets.get(parent) or not recorded:
            continue
        genes = sets[parent]
        if relation == "a child's genes are mostly its parent's":
            for child in recorded:
                checked += 1
                inside = len(sets[child] & genes) / len(sets[child])
                if inside < CHILD_IN_PARENT:
                    broken.append(f"{child} ({inside:.0%} of {len(sets[child])} genes under {parent})")
            continue
        checked += 1
        union = set().union(*(sets[d] for d in recorded))
        if relation == "a parent's genes are not just its descendants' union" and genes == union:
            broken.append(f"{parent} ({len(genes)} genes, exactly its descendants' union)")
        elif relation == "a parent's genes include its descendants'" and not union <= genes:
            broken.append(f"{parent} (lacks {len(union - genes)} of its descendants' {len(union)} genes)")
    return checked, broken


def read_table(path: str | Path, *, sep: str, family: str, required: Iterable[str], **kwargs: Any) -> pd.DataFrame:
    """Read a delimited source with every value a string ("NA" stays "NA"), checking its header."""
    try:
        with open_text(path) as handle:
            frame = pd.read_csv(handle, sep=sep, dtype=str, keep_default_na=False, na_filter=False, **kwargs)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, zipfile.BadZipFile, EOFError) as exc:
        raise SourceFormatError(f"{family} source '{path}': cannot be read as a table ({exc}).") from exc
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise SourceFormatError(
            f"{family} source '{Path(path).name}': expected columns {missing}, found {list(frame.columns)[:15]}; "
            "pass the file in its original release format."
        )
    return frame


def _is_url(location: str) -> bool:
    return location.startswith(("http://", "https://", "hf://"))


def _normalise(rows: pd.DataFrame, spec: TaskSpec, entity_id: str, mapper: SymbolMapper, *,
               keep_unresolved: bool = False) -> tuple[pd.DataFrame, dict]:
    """Map gene columns to current symbols; drop rows with an unresolved gene, or keep them as published."""
    columns = [c for c, kind in zip(("entity", "entity_2"), spec.entity_types) if kind == "gene" and c in rows]
    values = pd.unique(pd.concat([rows[c] for c in columns], ignore_index=True).astype(str).str.strip())
    if entity_id == "symbol":
        report = mapper.resolve(values)
        mapping, summary = report.mapping, report.summary()
    else:
        index = mapper.by_identifier(entity_id)
        mapping = {v: index[v] for v in values if v in index}
        summary = {"n_mapped": len(mapping), "n_renamed": 0, "n_ambiguous": 0, "n_unknown": len(values) - len(mapping)}
    if keep_unresolved:
        unresolved = [v for v in values if v not in mapping]
        mapping = {**mapping, **{v: v for v in unresolved}}
        summary = {**summary, "n_kept_unresolved": len(unresolved)}
    for column in columns:
        rows[column] = rows[column].astype(str).str.strip().map(mapping)
    rows = rows.dropna(subset=columns).reset_index(drop=True)
    return rows, summary


def _deduplicate(rows: pd.DataFrame, *, multilabel: bool, regression: bool) -> tuple[pd.DataFrame, int]:
    if multilabel:
        merged = rows.groupby("_key", sort=False).agg(
            entity=("entity", "first"), entity_2=("entity_2", "first"),
            label=("label", lambda lists: sorted({x for labels in lists for x in labels})),
        ).reset_index()
        return merged, 0
    target = "value" if regression else "label"
    distinct = rows.groupby("_key", sort=False)[target].nunique()
    conflicting = distinct.index[distinct > 1]
    rows = rows[~rows["_key"].isin(conflicting)].drop_duplicates("_key").reset_index(drop=True)
    return rows, int(len(conflicting))


def _apply_min_class_size(rows: pd.DataFrame, spec: TaskSpec, declared: tuple[str, ...]
                          ) -> tuple[pd.DataFrame, tuple[str, ...], int]:
    kind = task_type(spec.type)
    if not kind.is_classification:
        return rows, (), 0
    if kind.is_multilabel:
        n_before = len(rows)
        while True:  # each label needs enough genes with it and without it; dropping one can empty rows
            counts = pd.Series([x for labels in rows["label"] for x in labels], dtype=object).value_counts()
            keep = set(counts.index[(counts >= spec.min_class_size) & (len(rows) - counts >= spec.min_class_size)])
            rows = rows.assign(label=[sorted(set(labels) & keep) for labels in rows["label"]])
            rows = rows[rows["label"].map(len) > 0].reset_index(drop=True)
            if keep == set(counts.index):
                return rows, tuple(sorted(keep)), n_before - len(rows)
    counts = rows["label"].value_counts()
    keep = counts.index[counts >= spec.min_class_size]
    small = ~rows["label"].isin(keep)
    rows = rows[~small].reset_index(drop=True)
    names = declared or tuple(sorted(keep))
    _check_declared(rows, spec, names)
    return rows, names, int(small.sum())


def check_min_class_size(family: str, spec: TaskSpec, classes: np.ndarray | None, names: tuple[str, ...]) -> None:
    """Rule of every family: no label keeps fewer positives than the task's minimum class size.

    Raises:
        SourceFormatError: a label has fewer (the first ones named).
    """
    if classes is None or not len(names):
        return
    counts = classes.sum(axis=0)
    small = [f"{names[j]} ({int(counts[j])})" for j in np.flatnonzero(counts < spec.min_class_size)]
    if small:
        raise SourceFormatError(f"{family} task '{spec.name}' breaks the rule \"no label has fewer positives than the "
                                f"minimum class size ({spec.min_class_size})\": {', '.join(small[:3])}; the source's "
                                "labels were not filtered as built.")


def drop_identical_labels(rows: pd.DataFrame, names: tuple[str, ...]) -> dict[str, str]:
    """Rule of every family: no two labels of a multi-label task hold the same genes. Of each group of labels
    with one gene set, the first in label order is kept; the others are returned, label -> why.

    Examples:
        >>> rows = pd.DataFrame({"label": [["A", "B"], ["A", "B", "C"], ["C"]]})
        >>> drop_identical_labels(rows, ("A", "B", "C"))
        {'B': "the same 2 genes as 'A' (no two labels of a task hold the same genes)"}
    """
    first: dict[bytes, str] = {}
    dropped = {}
    hot = _multi_hot(rows["label"], names)
    for column, name in enumerate(names):
        key = np.packbits(hot[:, column]).tobytes()
        if key in first:
            dropped[name] = (f"the same {int(hot[:, column].sum())} genes as '{first[key]}' (no two labels of a task "
                             "hold the same genes)")
        else:
            first[key] = name
    return dropped


def _check_declared(rows: pd.DataFrame, spec: TaskSpec, names: tuple[str, ...]) -> None:
    unknown = sorted(set(rows["label"]) - set(names))
    if unknown:
        raise SourceFormatError(f"task '{spec.name}': labels {unknown} are not among the declared {list(names)}.")


def _strata(rows: pd.DataFrame, spec: TaskSpec, label_names: tuple[str, ...]) -> np.ndarray:
    """What folds are balanced on: classes, multi-hot labels, or quintiles of a regression target."""
    kind = task_type(spec.type)
    if not kind.is_classification:
        return pd.qcut(rows["value"].astype(float), 5, labels=False, duplicates="drop").to_numpy()
    return _multi_hot(rows["label"], label_names) if kind.is_multilabel else rows["label"].to_numpy()


def _class_matrix(rows: pd.DataFrame, spec: TaskSpec, label_names: tuple[str, ...]) -> np.ndarray | None:
    """Rows x classes (or labels) indicators, shape (n_rows, n_labels); None for regression."""
    kind = task_type(spec.type)
    return _multi_hot(kind.label_lists(rows["label"]), label_names) if kind.is_classification else None


def _with_family_report(meta: TaskMetadata, families: np.ndarray, classes: np.ndarray | None,
                        folds: np.ndarray) -> TaskMetadata:
    """`meta` with its family-fold figures (`TaskMetadata.family_report`) and, when its labels cannot be split by
    family, the reason (`family_unscorable`, the rule `genebench.tasks.folds.family_fold_problem` checks at open)."""
    names, sizes = np.unique(families.astype(str), return_counts=True)
    largest = int(np.argmax(sizes))
    report: dict[str, Any] = {"n_families": len(names), "largest_family": str(names[largest]),
                              "largest_family_share": round(float(sizes[largest] / len(families)), 4),
                              "fold_imbalance": round(fold_imbalance(folds, meta.n_folds), 4)}
    reason = None
    if classes is not None:
        kind = task_type(meta.type)
        counts = np.stack([classes[folds == k].sum(axis=0) for k in range(meta.n_folds)]).astype(int)
        missing = [str(meta.label_names[j]) for j in np.flatnonzero((counts == 0).any(axis=0))]
        report |= {"positives_per_fold": kind.positives(counts).tolist(), "labels_missing_a_fold": missing}
        reason = family_unscorable(meta.type, kind.labels_of(classes), folds, meta.n_folds)
        if reason is not None:
            biggest = ", ".join(f"{n} ({c} genes)" for n, c in sorted(zip(names, sizes), key=lambda x: -x[1])[:2])
            reason = (f"labels cannot be split by gene family: {len(families)} genes in {len(names)} families "
                      f"(largest {biggest}); {reason}")
    return meta.model_copy(update={"family_report": report, "family_unscorable": reason})


def _multi_hot(labels: pd.Series, names: tuple[str, ...]) -> np.ndarray:
    index = {name: i for i, name in enumerate(names)}
    matrix = np.zeros((len(labels), len(names)), dtype=np.uint8)
    for row, values in enumerate(labels):
        matrix[row, [index[v] for v in values]] = 1
    return matrix


def _labels_column(rows: pd.DataFrame, spec: TaskSpec) -> list[list[str]]:
    kind = task_type(spec.type)
    return kind.label_lists(rows["label"]) if kind.is_classification else [[] for _ in range(len(rows))]
