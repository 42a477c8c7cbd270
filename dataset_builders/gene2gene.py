"""gene2gene: "Gene2Gene", gene pairs labelled interacting or not (Gene2vec's predictionData)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dataset_builders.base import FamilyBuilder, FamilyRead, RawTask, Source
from genebench.errors import SourceFormatError
from genebench.symbols import SymbolMapper
from genebench.tasks.metadata import TaskSpec
from genebench.textfiles import open_text

_CITATION = """\
@article{du2019gene2vec,
  title={Gene2vec: distributed representation of genes based on co-expression},
  author={Du, Jingcheng and Jia, Peilin and Dai, Yulin and others},
  journal={BMC Genomics}, volume={20}, number={Suppl 1}, pages={82}, year={2019}
}"""
_DESCRIPTION = """\
Gene2vec prediction data: 290,032 human gene pairs labelled as co-expression interacting (1) or not (0).
"""
_HOMEPAGE = "https://github.com/jingcheng-du/Gene2vec"
_LICENSE = "MIT"
_BASE = "https://raw.githubusercontent.com/jingcheng-du/Gene2vec/master/predictionData/"
PARTS = ("train", "valid", "test")
LABELS = {"0": "not interacting", "1": "interacting"}


GENE2GENE = TaskSpec(
    name="Gene2Gene",
    category="biological processes",
    type="gene-pair binary",
    entity_types=("gene", "gene"),
    description="Whether two genes interact (Gene2vec's held-out co-expression pairs).",
    notes="Gene2vec's train, valid and test parts are pooled and re-split into seeded folds.",
)


class Gene2Gene(FamilyBuilder):
    """Builder of the gene2gene family."""

    FAMILY = "gene2gene"
    CITATION = _CITATION
    DESCRIPTION = _DESCRIPTION
    HOMEPAGE = _HOMEPAGE
    LICENSE = _LICENSE
    SOURCES = {
        f"{part}_{kind}": Source(url=f"{_BASE}{part}_{kind}.txt", version="master (2018-05-07)",
                                 local_names=(f"{part}_{kind}.txt", f"gene2vec_prediction/{part}_{kind}.txt",
                                              f"predictionData/{part}_{kind}.txt"))
        for part in PARTS for kind in ("text", "label")
    }
    TASKS = (GENE2GENE, GENE2GENE.model_validate({
        **GENE2GENE.model_dump(), "name": "Gene2Gene (cold genes)", "fold_scheme": "cold genes",
        "description": "Gene2Gene under cold-gene folds: no gene of a held-out pair appears in any training pair.",
        "notes": "The genes are split into one seeded group per fold and only pairs within a group are kept, so a "
                 "probe cannot score a pair by what it learnt about either gene from other pairs "
                 "(genebench/tasks/folds.py); the symbol report's n_cross_group counts the pairs left out.",
    }))

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        parts = pd.concat([read_pairs(paths[f"{part}_text"], paths[f"{part}_label"]) for part in PARTS],
                          ignore_index=True)
        for spec in self.TASKS:
            yield RawTask(spec=spec, rows=parts, source_key="train_text", label_names=tuple(LABELS.values()))


def read_pairs(text: Path, labels: Path) -> pd.DataFrame:
    """Read one part: "SYMBOL1 SYMBOL2" lines and a matching file of 0/1 lines."""
    with open_text(text) as handle:
        pairs = [line.split() for line in handle.read().splitlines() if line.strip()]
    with open_text(labels) as handle:
        values = [line.strip() for line in handle.read().splitlines() if line.strip()]
    bad = next((i for i, pair in enumerate(pairs, 1) if len(pair) != 2), None)
    if bad is not None:
        raise SourceFormatError(f"gene2gene source '{text.name}' line {bad}: expected 'SYMBOL1 SYMBOL2'.")
    if len(pairs) != len(values):
        raise SourceFormatError(
            f"gene2gene sources '{text.name}' and '{labels.name}': {len(pairs)} pairs but {len(values)} labels; "
            "expected one 0/1 label per pair."
        )
    unexpected = sorted(set(values) - set(LABELS))
    if unexpected:
        raise SourceFormatError(f"gene2gene source '{labels.name}': labels {unexpected[:5]}; expected 0 or 1.")
    frame = pd.DataFrame(pairs, columns=["entity", "entity_2"])
    return frame.assign(label=[LABELS[v] for v in values])
