"""perturbqa: PerturbQA's differential expression and direction-of-change tasks (Wu et al., ICLR 2025).

Each row is (perturbed gene, read-out gene, label) with PerturbQA's published train/test split, kept exactly:
every published row is exported (`RawTask.keep_rows`), symbols HGNC cannot resolve stay as published and are
counted in the symbol report. The k562_set tasks read out gene clusters ("1-mitochondrial respiratory chain"),
whose members are the auxiliary table `set_mapping`. The gene-set enrichment data (sets of perturbed genes,
"pert", and of read-out genes, "gene", with their text labels) is the auxiliary table `gse`; sets without a
label are skipped by default, as PerturbQA's `load_gse(skip_empty=True)` does.

The published split is cold for perturbations: in every task, no perturbed gene of `test` is perturbed in `train`
(k562 de: 267 test perturbations, none seen in training), while read-out genes recur. A probe must therefore
generalise to unseen perturbations, and gene identity alone scores exactly chance there (the `identity` control,
0.500 on all ten tasks: `auc_per_gene` ranks within one read-out gene).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dataset_builders.base import FamilyBuilder, FamilyConfig, FamilyRead, RawTask, Source, read_table
from genebench.errors import SourceFormatError
from genebench.partners import PartnerRecipe
from genebench.symbols import SymbolMapper
from genebench.tasks.metadata import TaskSpec

_CITATION = """\
@inproceedings{wu2025perturbqa,
  title={Contextualizing biological perturbation experiments through language},
  author={Wu, Menghua and Littman, Russell and Levine, Jacob and Qiu, Lin and Biancalani, Tommaso and
          Richmond, David and Huetter, Jan-Christian},
  booktitle={International Conference on Learning Representations (ICLR)}, year={2025}
}"""
_DESCRIPTION = """\
PerturbQA: does knocking down one gene change the expression of another (de), and in which direction (dir),
in K562, RPE1, HepG2 and Jurkat Perturb-seq screens, with PerturbQA's published train/test split.
"""
_HOMEPAGE = "https://github.com/Genentech/PerturbQA"
_LICENSE = "CC-BY-4.0"
_COMMIT = "13531e834f4aa4084472bccf7c11c02984e146f2"
_BASE = f"https://raw.githubusercontent.com/Genentech/PerturbQA/{_COMMIT}/perturbqa/datasets/"
_VERSION = f"{_COMMIT[:7]} (2025-03-04)"
CELL_LINES = ("k562", "rpe1", "hepg2", "jurkat", "k562_set")
KINDS = {
    "de": (("not differentially expressed", "differentially expressed"),
           "whether knocking down the first gene differentially expresses the second"),
    "dir": (("down-regulated", "up-regulated"),
            "for a differentially expressed pair, whether the second gene goes up (label 1) or down (label 0)"),
}
COLUMNS = ("pert", "gene", "label", "split")
SPLIT_VALUES = ("train", "test")
GSE_KINDS = ("pert", "gene")


def _source(stem: str) -> Source:
    return Source(url=f"{_BASE}{stem}", version=_VERSION, local_names=(stem, f"datasets/{stem}"))


def task_name(cell_line: str, kind: str) -> str:
    """The task name of one PerturbQA file, e.g. `task_name("k562", "de") == "PerturbQA k562 de"`."""
    return f"PerturbQA {cell_line} {kind}"


def _spec(cell_line: str, kind: str) -> TaskSpec:
    readout = "gene set" if cell_line == "k562_set" else "gene"
    return TaskSpec(
        name=task_name(cell_line, kind),
        category="regulatory functions",
        type="binary",
        entity_types=("gene", readout),
        evaluation="train-test",
        min_class_size=1,
        description=f"PerturbQA {cell_line} {kind}: {KINDS[kind][1]} (perturbed gene, read-out {readout}).",
        notes="PerturbQA's published train/test split, every row kept; scored by auc_per_gene (ROC AUC per "
              "read-out, averaged).",
    )


@dataclass
class PerturbQAConfig(FamilyConfig):
    """PerturbQA options.

    Args:
        gse_skip_empty: leave out gene sets without a text label from the `gse` table, as PerturbQA does.
    """

    gse_skip_empty: bool = True


class PerturbQA(FamilyBuilder):
    """Builder of the perturbqa family."""

    BUILDER_CONFIG_CLASS = PerturbQAConfig
    FAMILY = "perturbqa"
    CITATION = _CITATION
    DESCRIPTION = _DESCRIPTION
    HOMEPAGE = _HOMEPAGE
    LICENSE = _LICENSE
    SPLITS = "train-test"
    SOURCES = {
        **{f"{line}-{kind}": _source(f"{line}-{kind}.csv") for line in CELL_LINES for kind in KINDS},
        **{f"k562_{kind}-gse": _source(f"k562_{kind}-gse.json") for kind in GSE_KINDS},
        "k562_set-mapping": _source("k562_set-mapping.json"),
    }
    TASKS = tuple(_spec(line, kind) for line in CELL_LINES for kind in KINDS)
    PARTNERS = PartnerRecipe(table="set_mapping", id="cluster", members="genes")
    """k562_set tasks pair a gene with a gene set (`set_mapping` cluster): its vector is the mean of its members'."""
    DIFFERENCES = """\
PerturbQA is not in the reference benchmark. Rows, splits and labels are PerturbQA's files at commit 13531e8,
unchanged; only symbols are renamed to current HGNC (unresolved ones kept as published)."""

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        read.auxiliary["gse"] = pd.concat(
            [read_gse(paths[f"k562_{kind}-gse"], kind, skip_empty=self.config.gse_skip_empty) for kind in GSE_KINDS],
            ignore_index=True)
        read.auxiliary["set_mapping"] = read_set_mapping(paths["k562_set-mapping"])
        for spec in self.TASKS:
            _, line, kind = spec.name.split(" ")
            yield read_pairs(paths[f"{line}-{kind}"], spec, source_key=f"{line}-{kind}")


def read_pairs(path: Path, spec: TaskSpec, *, source_key: str) -> RawTask:
    """Read one `<cell line>-<de|dir>.csv` (pert,gene,label,split) into a train-test task, checking its values."""
    frame = read_table(path, sep=",", family="perturbqa", required=COLUMNS)
    for column, allowed in (("split", SPLIT_VALUES), ("label", ("0", "1"))):
        unexpected = sorted(set(frame[column].unique()) - set(allowed))
        if unexpected:
            raise SourceFormatError(
                f"perturbqa source '{Path(path).name}': column '{column}' holds {unexpected[:5]}; expected "
                f"{list(allowed)}. Pass the file as published in Genentech/PerturbQA perturbqa/datasets/."
            )
    names = KINDS[spec.name.rsplit(" ", 1)[1]][0]
    rows = pd.DataFrame({
        "entity": frame["pert"], "entity_2": frame["gene"],
        "label": frame["label"].map({"0": names[0], "1": names[1]}), "split": frame["split"],
    })
    return RawTask(spec=spec, rows=rows, source_key=source_key, label_names=names, keep_rows=True)


def _read_json(path: Path) -> object:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceFormatError(f"perturbqa source '{Path(path).name}': cannot be read as JSON ({exc}).") from exc


def read_gse(path: Path, kind: str, *, skip_empty: bool = True) -> pd.DataFrame:
    """Read `k562_<pert|gene>-gse.json` (a list of {"genes": [...], "label": str or null}).

    Returns:
        a frame with columns kind, set_index (position in the file), label, genes (list of symbols, as published).
    """
    payload = _read_json(path)
    valid = isinstance(payload, list) and all(
        isinstance(item, dict) and isinstance(item.get("genes"), list) and "label" in item for item in payload)
    if not valid:
        raise SourceFormatError(
            f"perturbqa source '{Path(path).name}': expected a JSON list of {{\"genes\": [...], \"label\": ...}} "
            "objects, as PerturbQA's k562_*-gse.json files hold."
        )
    rows = [{"kind": kind, "set_index": index, "label": item["label"], "genes": [str(g) for g in item["genes"]]}
            for index, item in enumerate(payload) if item["label"] is not None or not skip_empty]
    return pd.DataFrame(rows, columns=["kind", "set_index", "label", "genes"])


def read_set_mapping(path: Path) -> pd.DataFrame:
    """Read `k562_set-mapping.json` (cluster name -> member genes) into columns cluster, genes."""
    payload = _read_json(path)
    if not isinstance(payload, dict) or not all(isinstance(v, list) for v in payload.values()):
        raise SourceFormatError(
            f"perturbqa source '{Path(path).name}': expected a JSON object mapping each cluster name to a gene list."
        )
    return pd.DataFrame({"cluster": list(payload), "genes": [[str(g) for g in v] for v in payload.values()]})
