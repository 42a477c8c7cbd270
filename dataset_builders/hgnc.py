"""hgnc: "HLA class I vs class II" from HGNC gene group 588 (major histocompatibility complex)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dataset_builders.base import HGNC_SOURCE, FamilyBuilder, FamilyRead, RawTask
from genebench.symbols import SymbolMapper
from genebench.tasks.metadata import TaskSpec

_CITATION = """\
@article{seal2023genenames,
  title={Genenames.org: the HGNC resources in 2023},
  author={Seal, Ruth L and Braschi, Bryony and Gray, Kristian and others},
  journal={Nucleic Acids Research}, volume={51}, number={D1}, pages={D1003--D1009}, year={2023}
}"""
_DESCRIPTION = """\
HGNC gene groups: the HLA genes of group 588, labelled class I or class II from their approved names.
"""
_HOMEPAGE = "https://www.genenames.org/data/genegroup/#!/group/588"
_LICENSE = "CC0-1.0"
HLA_GROUP = "588"


class HGNC(FamilyBuilder):
    """Builder of the hgnc family (its source is the HGNC table every family normalises with)."""

    FAMILY = "hgnc"
    CITATION = _CITATION
    DESCRIPTION = _DESCRIPTION
    HOMEPAGE = _HOMEPAGE
    LICENSE = _LICENSE
    SOURCES = {"hgnc": HGNC_SOURCE}
    TASKS = (
        TaskSpec(
            name="HLA class I vs class II",
            category="protein properties",
            type="binary",
            min_class_size=2,
            description="Major histocompatibility complex genes (HGNC group 588): class I or class II.",
        ),
    )

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        yield hla_classes(mapper.table, self.TASKS[0])


def hla_classes(table: pd.DataFrame, spec: TaskSpec) -> RawTask:
    """Genes of HGNC group 588, classed by "class I" / "class II" in their approved name."""
    in_group = table["gene_group_id"].str.split("|").map(lambda ids: HLA_GROUP in ids)
    group = table[in_group]
    label = group["name"].str.extract(r"class (II|I)\b", expand=False).map({"I": "class I", "II": "class II"})
    rows = pd.DataFrame({"entity": group["symbol"], "label": label}).dropna()
    return RawTask(spec=spec, rows=rows, source_key="hgnc", label_names=("class I", "class II"))
