"""genecorpus: the six gene-classification tasks of Geneformer's Genecorpus-30M.

Each source is a pickled dict {class name: [Ensembl gene ids]}, read with a restricted unpickler; the
same dicts as CSV (`gene_id,label`, the label a Python list literal) are accepted as local overrides.
Ensembl ids map to symbols through HGNC's `ensembl_gene_id`.

The reference implementation swaps two files: its "N1 network" is built from n1_target.pickle and its
"N1 targets" from n1_network.pickle. Here each task is built from the file of its own name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dataset_builders.base import FamilyBuilder, FamilyRead, RawTask, Source, read_table
from genebench.errors import SourceFormatError
from genebench.safe_pickle import safe_load
from genebench.symbols import SymbolMapper
from genebench.tasks.metadata import TaskSpec

_CITATION = """\
@article{theodoris2023transfer,
  title={Transfer learning enables predictions in network biology},
  author={Theodoris, Christina V and Xiao, Ling and Chopra, Anant and others},
  journal={Nature}, volume={618}, pages={616--624}, year={2023}, doi={10.1038/s41586-023-06139-9}
}"""
_DESCRIPTION = """\
Genecorpus-30M gene classification examples: dosage-sensitive TFs, bivalent promoters, TF regulatory range
and NOTCH1 network genes.
"""
_HOMEPAGE = "https://huggingface.co/datasets/ctheodoris/Genecorpus-30M"
_LICENSE = "Apache-2.0"
_BASE = "https://huggingface.co/datasets/ctheodoris/Genecorpus-30M/resolve/main/example_input_files/gene_classification/"


def _source(folder: str, stem: str) -> Source:
    return Source(url=f"{_BASE}{folder}/{stem}.pickle", version="main",
                  local_names=(f"{stem}.pickle", f"*/{stem}.pickle", f"*/{stem}.csv", f"{stem}.csv"))


# task name -> (source key, (negative class, positive class), category, aliases, notes)
_TASKS = {
    "dosage sensitive vs insensitive TF": (
        "dosage_sensitivity_TFs", ("Dosage-insensitive TFs", "Dosage-sensitive TFs"), "genomic properties", (), ""),
    "bivalent vs non-methylated": (
        "bivalent_vs_no_methyl", ("no_methylation", "bivalent"), "genomic properties", (), ""),
    "bivalent vs Lys4-only-methylated": (
        "bivalent_vs_lys4_only", ("lys4_only", "bivalent"), "genomic properties",
        ("Lys4-only-methylated vs non-methylated",),
        "The reference calls this task 'Lys4-only-methylated vs non-methylated', but builds it from "
        "bivalent_vs_lys4_only: it is bivalent vs Lys4-only-methylated promoters."),
    "long vs short range TF": ("tf_regulatory_range", ("short_range", "long_range"), "regulatory functions", (), ""),
    "N1 network": ("n1_network", ("n1_peripheral", "n1_central"), "regulatory functions", (),
                   "Built from n1_network.pickle (central vs peripheral NOTCH1 network genes); the reference "
                   "builds its 'N1 network' from n1_target.pickle by mistake."),
    "N1 targets": ("n1_target", ("n1_nontarget", "n1_activated"), "regulatory functions", (),
                   "Built from n1_target.pickle (NOTCH1-activated targets vs non-targets); the reference builds "
                   "its 'N1 targets' from n1_network.pickle by mistake."),
}


class Genecorpus(FamilyBuilder):
    """Builder of the genecorpus family."""

    FAMILY = "genecorpus"
    CITATION = _CITATION
    DESCRIPTION = _DESCRIPTION
    HOMEPAGE = _HOMEPAGE
    LICENSE = _LICENSE
    SOURCES = {
        "dosage_sensitivity_TFs": _source("dosage_sensitive_tfs", "dosage_sensitivity_TFs"),
        "bivalent_vs_no_methyl": _source("bivalent_promoters", "bivalent_vs_no_methyl"),
        "bivalent_vs_lys4_only": _source("bivalent_promoters", "bivalent_vs_lys4_only"),
        "tf_regulatory_range": _source("tf_regulatory_range", "tf_regulatory_range"),
        "n1_network": _source("notch1_network", "n1_network"),
        "n1_target": _source("notch1_network", "n1_target"),
    }
    TASKS = tuple(
        TaskSpec(name=name, category=category, type="binary", aliases=aliases, notes=notes, min_class_size=5,
                 description=f"{positive} vs {negative} genes (Genecorpus-30M {key}).")
        for name, (key, (negative, positive), category, aliases, notes) in _TASKS.items()
    )

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        for spec in self.TASKS:
            key, label_names = _TASKS[spec.name][:2]
            classes = read_class_dict(paths[key])
            yield class_dict_task(classes, spec, key, label_names, paths[key])


def read_class_dict(path: Path) -> dict[str, list[str]]:
    """Read a {class: [Ensembl ids]} dict from a pickle (restricted) or its CSV form."""
    with open(path, "rb") as handle:
        if handle.read(1) == b"\x80":
            handle.seek(0)
            payload = safe_load(handle)
            flat = isinstance(payload, dict) and all(isinstance(v, (list, tuple, set))
                                                     and all(isinstance(x, (str, int)) for x in v)
                                                     for v in payload.values())
            if not flat:
                raise SourceFormatError(f"genecorpus source '{path}': expected a pickled dict of class name -> list of "
                                        f"Ensembl ids, found a {type(payload).__name__} holding other values.")
            return {str(k): [str(x) for x in v] for k, v in payload.items()}
    frame = read_table(path, sep=",", family="genecorpus", required=("gene_id", "label"))
    try:
        return {name: [str(x) for x in ast.literal_eval(ids)] for name, ids in zip(frame["gene_id"], frame["label"])}
    except (ValueError, SyntaxError) as exc:
        raise SourceFormatError(
            f"genecorpus source '{path}': column 'label' must hold Python list literals of Ensembl ids ({exc})."
        ) from exc


def class_dict_task(classes: dict[str, list[str]], spec: TaskSpec, key: str, label_names: tuple[str, str],
                    path: Path) -> RawTask:
    """Turn a class dict into a binary task, checking it holds exactly the expected classes."""
    if set(classes) != set(label_names):
        raise SourceFormatError(
            f"genecorpus source '{path.name}': expected classes {list(label_names)}, found {sorted(classes)}."
        )
    rows = pd.DataFrame(
        [(gene, name) for name, genes in classes.items() for gene in dict.fromkeys(genes)],
        columns=["entity", "label"],
    )
    return RawTask(spec=spec, rows=rows, source_key=key, label_names=label_names, entity_id="ensembl_gene_id")
