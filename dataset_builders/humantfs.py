"""humantfs: "TF vs non-TF" from Lambert et al.'s Human Transcription Factors database (v1.01)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dataset_builders.base import FamilyBuilder, FamilyRead, RawTask, Source, read_table
from genebench.errors import SourceFormatError
from genebench.symbols import SymbolMapper
from genebench.tasks.metadata import TaskSpec

_CITATION = """\
@article{lambert2018human,
  title={The Human Transcription Factors},
  author={Lambert, Samuel A and Jolma, Arttu and Campitelli, Laura F and others},
  journal={Cell}, volume={172}, number={4}, pages={650--665}, year={2018},
  doi={10.1016/j.cell.2018.01.029}
}"""
_DESCRIPTION = """\
Human TFs: 2,765 curated candidate transcription factors, each assessed as a TF or not (Lambert et al. 2018).
"""
_HOMEPAGE = "http://humantfs.ccbr.utoronto.ca/"
_LICENSE = "Publicly downloadable; no licence stated, cite Lambert et al. 2018."
_SOURCES = {
    "v1.01": Source(
        url="http://humantfs.ccbr.utoronto.ca/download/v_1.01/DatabaseExtract_v_1.01.csv",
        version="v1.01",
        local_names=("DatabaseExtract_v_1.01.csv", "DatabaseExtract*.csv"),
        sha256="d32dc7b1b00ae276f6ad256937ee5098ce6e3f5d76adda64fface7382f87641e",
    ),
}
_LABELS = {"Yes": "TF", "No": "non-TF"}


class HumanTFs(FamilyBuilder):
    """Builder of the humantfs family."""

    FAMILY = "humantfs"
    CITATION = _CITATION
    DESCRIPTION = _DESCRIPTION
    HOMEPAGE = _HOMEPAGE
    LICENSE = _LICENSE
    SOURCES = {"extract": _SOURCES["v1.01"]}
    TASKS = (
        TaskSpec(
            name="TF vs non-TF",
            category="regulatory functions",
            type="binary",
            description="Whether a candidate DNA-binding protein is a transcription factor ('Is TF?').",
        ),
    )

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        yield parse_extract(paths["extract"], self.TASKS[0])


def parse_extract(path: Path, spec: TaskSpec) -> RawTask:
    """Read DatabaseExtract_v_1.01.csv into the "TF vs non-TF" task."""
    frame = read_table(path, sep=",", family="humantfs", required=("HGNC symbol", "Is TF?"))
    unexpected = sorted(set(frame["Is TF?"]) - set(_LABELS))
    if unexpected:
        raise SourceFormatError(
            f"humantfs source '{Path(path).name}': column 'Is TF?' holds {unexpected}; expected 'Yes' or 'No'."
        )
    rows = frame.assign(entity=frame["HGNC symbol"], label=frame["Is TF?"].map(_LABELS))[["entity", "label"]]
    return RawTask(spec=spec, rows=rows, source_key="extract", label_names=("non-TF", "TF"))
