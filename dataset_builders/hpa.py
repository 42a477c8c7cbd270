"""hpa: the Human Protein Atlas tasks of the reference, one per column of proteinatlas.tsv.

43 categorical tasks (RNA specificity and distribution, secretome, chromosome, expression clusters, pathology
prognostics), 6 multi-label tasks with a derived binary task per label of at least 5% prevalence, and the two
cell-cycle-dependence (CCD) binary tasks. Genes are keyed by their Ensembl id where HGNC knows it, else by the
"Gene" symbol. Releases differ: a column the release lacks is skipped and reported, not fatal; v18's
"RNA ... category" columns stand in for v23's "RNA ... specificity" (with their own, older, class names).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dataset_builders.base import FamilyBuilder, FamilyConfig, FamilyRead, RawTask, Source, read_table
from genebench.errors import SourceFormatError
from genebench.symbols import SymbolMapper
from genebench.tasks.metadata import TaskSpec
from genebench.tasks.types import task_type

logger = logging.getLogger(__name__)

_CITATION = """\
@article{uhlen2015tissue,
  title={Tissue-based map of the human proteome},
  author={Uhl{\\'e}n, Mathias and Fagerberg, Linn and Hallstr{\\"o}m, Bj{\\"o}rn M and others},
  journal={Science}, volume={347}, number={6220}, pages={1260419}, year={2015}, doi={10.1126/science.1260419}
}"""
_DESCRIPTION = """\
Human Protein Atlas: RNA expression specificity, protein classes, subcellular and secretome location, expression
clusters, pathology prognostics and cell-cycle dependence of human genes (proteinatlas.tsv).
"""
_HOMEPAGE = "https://www.proteinatlas.org/"
_LICENSE = "CC-BY-SA-4.0"
DEFAULT_RELEASE = "v23"
MIN_CLASS_SIZE = 5
"""Classes with fewer genes are dropped, so every class can appear in each of the 5 folds (the reference's -cth)."""
DERIVED_MIN_PREVALENCE = 0.05

_RNA = ("tissue", "single cell type", "cancer", "brain regional", "blood cell", "blood lineage", "cell line",
        "mouse brain regional", "pig brain regional")
_CANCERS = ("Breast cancer", "Cervical cancer", "Colorectal cancer", "Endometrial cancer", "Glioma",
            "Head and neck cancer", "Liver cancer", "Lung cancer", "Melanoma", "Ovarian cancer", "Pancreatic cancer",
            "Prostate cancer", "Renal cancer", "Stomach cancer", "Testis cancer", "Thyroid cancer",
            "Urothelial cancer")
_CATEGORICAL = {
    **{f"RNA {kind} {what}": "localization" for kind in _RNA for what in ("specificity", "distribution")},
    "Secretome location": "localization",
    "Secretome function": "biological processes",
    "Chromosome": "genomic properties",
    **{f"{kind} expression cluster": "localization"
       for kind in ("Blood", "Tissue", "Brain", "Cell line", "Single cell")},
    **{f"Pathology prognostics - {cancer}": "biological processes" for cancer in _CANCERS},
}
_MULTI_LABEL = {
    "Protein class": "protein properties",
    "Subcellular location": "localization",
    "Biological process": "biological processes",
    "Molecular function": "protein properties",
    "Disease involvement": "biological processes",
    "RNA tissue cell type enrichment": "localization",
}
_BINARY = {"CCD Transcript": "biological processes", "CCD Protein": "biological processes"}
CCD_LABELS = ("No", "Yes")
RENAMED = {
    "RNA tissue specificity": "RNA tissue category",
    "RNA cancer specificity": "RNA cancer category",
    "RNA cell line specificity": "RNA cell line category",
}
"""Current column -> its name in older releases (v18), used when the current one is absent."""
MISSING_VALUES = ("", "NA")
_SEPARATORS = re.compile(r"\s*(?:<br>|,)\s*")
_P_VALUE = re.compile(r"\s*\([^()]*\)\s*$")


def _spec(name: str) -> TaskSpec:
    if name in _MULTI_LABEL:
        return TaskSpec(name=name, category=_MULTI_LABEL[name], type="multi-label", min_class_size=MIN_CLASS_SIZE,
                        derived_min_prevalence=DERIVED_MIN_PREVALENCE,
                        description=f"HPA '{name}': every value listed for a gene.")
    if name in _BINARY:
        return TaskSpec(name=name, category=_BINARY[name], type="binary", min_class_size=MIN_CLASS_SIZE,
                        description=f"HPA '{name}': whether the gene's {name.split()[1].lower()} varies with the "
                                    "cell cycle.")
    return TaskSpec(name=name, category=_CATEGORICAL[name], type="categorical", min_class_size=MIN_CLASS_SIZE,
                    description=f"HPA '{name}' class of each gene.",
                    notes=f"Classes with fewer than {MIN_CLASS_SIZE} genes are dropped.")


@dataclass
class HPAConfig(FamilyConfig):
    """HPA options.

    Args:
        release: the proteinatlas.tsv release to download ("v23", the reference's; "v24", ...).
    """

    release: str = DEFAULT_RELEASE

    def __post_init__(self) -> None:
        super().__post_init__()
        if not re.fullmatch(r"v\d+(\.\d+)?", self.release):
            raise SourceFormatError(f"hpa release '{self.release}': expected a release like 'v23' or 'v18.1'.")


def release_source(release: str) -> Source:
    """The proteinatlas.tsv download of one release."""
    return Source(url=f"https://{release}.proteinatlas.org/download/proteinatlas.tsv.zip", version=release,
                  local_names=("proteinatlas*.tsv*", "proteinatlas*.zip"))


class HPA(FamilyBuilder):
    """Builder of the hpa family."""

    BUILDER_CONFIG_CLASS = HPAConfig
    FAMILY = "hpa"
    CITATION = _CITATION
    DESCRIPTION = _DESCRIPTION
    HOMEPAGE = _HOMEPAGE
    LICENSE = _LICENSE
    SOURCES = {"proteinatlas": release_source(DEFAULT_RELEASE)}
    TASKS = tuple(_spec(name) for name in (*_CATEGORICAL, *_MULTI_LABEL, *_BINARY))
    DIFFERENCES = """\
The reference uses v23 (89 columns, ~20k genes). A release lacking a task's column skips that task (listed
below); v18.1 has 22 columns, so only Chromosome, Protein class, Subcellular location and the three
'RNA ... specificity' tasks (from v18's 'RNA ... category', with older class names) can be built from it.
Classes below 5 genes are dropped (the reference's -cth)."""

    def sources(self) -> dict[str, Source]:
        return {"proteinatlas": release_source(self.config.release)}

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        named = re.search(r"_(v\d+(?:\.\d+)?)[_.]", paths["proteinatlas"].name)
        if named and named.group(1) != self.config.release:  # a local copy that names another release
            read.source_versions["proteinatlas"] = f"{named.group(1)} (local: {paths['proteinatlas'].name})"
        tasks, skipped = parse_proteinatlas(paths["proteinatlas"], self.TASKS, mapper)
        read.skipped_tasks.update(skipped)
        if skipped:
            names = list(skipped)
            logger.warning("hpa: skipped %d of %d tasks that '%s' cannot give (%s%s); the dataset card lists why",
                           len(names), len(self.TASKS), paths["proteinatlas"].name, ", ".join(names[:4]),
                           ", ..." if len(names) > 4 else "")
        yield from tasks


def parse_proteinatlas(path: Path, specs: Iterable[TaskSpec], mapper: SymbolMapper
                       ) -> tuple[list[RawTask], dict[str, str]]:
    """Read proteinatlas.tsv into one raw task per declared column it has.

    Returns:
        (tasks, skipped): the raw tasks, and task name -> why it was skipped (column absent or too sparse).
    """
    frame = read_table(path, sep="\t", family="hpa", required=("Gene",))
    specs = list(specs)
    present = {spec.name: _column(spec.name, frame.columns) for spec in specs}
    if not any(present.values()):
        raise SourceFormatError(
            f"hpa source '{Path(path).name}': none of the {len(specs)} task columns (e.g. 'Chromosome', "
            f"'Protein class', 'RNA tissue specificity') is present; found {list(frame.columns)[:15]}. Pass "
            "proteinatlas.tsv as downloaded from proteinatlas.org."
        )
    entities = _entities(frame, mapper)
    tasks, skipped = [], {}
    for spec in specs:
        column = present[spec.name]
        if column is None:
            skipped[spec.name] = f"column '{spec.name}' is absent from '{Path(path).name}'."
            continue
        task = column_task(spec, entities, frame[column])
        if task is None:
            skipped[spec.name] = f"column '{column}' has fewer than 2 classes of {spec.min_class_size}+ genes."
            continue
        if column != spec.name:
            task.notes.append(f"Built from this release's column '{column}'.")
        tasks.append(task)
    return tasks, skipped


def _column(name: str, columns: pd.Index) -> str | None:
    if name in columns:
        return name
    old = RENAMED.get(name)
    return old if old in columns else None


def _entities(frame: pd.DataFrame, mapper: SymbolMapper) -> pd.Series:
    """Each row's gene: the HGNC symbol of its Ensembl id where HGNC knows it, else the "Gene" column."""
    if "Ensembl" not in frame.columns:
        return frame["Gene"]
    by_ensembl = frame["Ensembl"].map(mapper.by_identifier("ensembl_gene_id"))
    return by_ensembl.fillna(frame["Gene"])


def column_task(spec: TaskSpec, entities: pd.Series, values: pd.Series) -> RawTask | None:
    """One task from one column's values; None when it cannot make two classes (or one label) of enough genes."""
    values = values.str.strip()
    if spec.name.startswith("Pathology prognostics"):
        values = values.str.replace(_P_VALUE, "", regex=True)
    elif spec.name == "Cell line expression cluster":
        values = values.str.replace(";", "", regex=False)
    keep = ~values.isin(MISSING_VALUES)
    entities, values = entities[keep], values[keep]
    label_names: tuple[str, ...] = ()
    if task_type(spec.type).is_multilabel:
        labels = [sorted({x for x in _SEPARATORS.split(v) if x}) for v in values]
        counts = pd.Series([x for row in labels for x in row]).value_counts()
        enough = int((counts >= spec.min_class_size).sum()) >= 1
    else:
        labels = values.tolist()
        enough = int((values.value_counts() >= spec.min_class_size).sum()) >= 2
        if spec.name in _BINARY:  # cell-cycle dependence: Yes or No
            unexpected = sorted(set(labels) - set(CCD_LABELS))
            if unexpected:
                raise SourceFormatError(
                    f"hpa column '{spec.name}': values {unexpected[:5]}; expected 'Yes', 'No' or 'NA'."
                )
            label_names = CCD_LABELS
    if not enough:
        return None
    rows = pd.DataFrame({"entity": entities.to_numpy(), "label": labels})
    return RawTask(spec=spec, rows=rows, source_key="proteinatlas", label_names=label_names)
