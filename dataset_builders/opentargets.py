"""opentargets: gene-disease association scores and therapeutic areas from the Open Targets Platform.

"Gene Disease Association" (the reference's task) is a regression on (gene, disease) pairs: the direct overall
association score of associationByOverallDirect. Models encode the disease side from its name and description,
exported as the auxiliary table `diseases` (id, name, description, therapeutic_areas). "Therapeutic areas" is a
multi-label task: the therapeutic areas of the diseases a target is directly associated with at a score of at
least `therapeutic_area_min_score`, with a derived binary task per frequent area.

Both sources are Spark parquet directories (part-NNNNN-*.parquet). They are read from a local mirror
(`--sources DIR` with DIR/opentargets/associationByOverallDirect/ and DIR/opentargets/diseases/); a folder with
no parts, a gap in the part numbers, or an unreadable part is an error, never a silent partial build.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dataset_builders.base import FamilyBuilder, FamilyConfig, FamilyRead, RawTask, Source
from genebench.errors import MissingSourceError, SourceFormatError
from genebench.partners import PartnerRecipe
from genebench.symbols import SymbolMapper
from genebench.tasks.metadata import TaskSpec

logger = logging.getLogger(__name__)

_CITATION = """\
@article{ochoa2023opentargets,
  title={The next-generation Open Targets Platform: reimagined, redesigned, rebuilt},
  author={Ochoa, David and Hercules, Andrew and Carmona, Miguel and others},
  journal={Nucleic Acids Research}, volume={51}, number={D1}, pages={D1353--D1359}, year={2023},
  doi={10.1093/nar/gkac1046}
}"""
_DESCRIPTION = """\
Open Targets Platform: direct overall gene-disease association scores and the therapeutic areas of targets.
"""
_HOMEPAGE = "https://platform.opentargets.org/"
_LICENSE = "CC0-1.0"
DEFAULT_RELEASE = "23.09"
ASSOCIATION_COLUMNS = ("diseaseId", "targetId", "score")
DISEASE_COLUMNS = ("id", "name", "description", "therapeuticAreas")
_PART = re.compile(r"part-(\d+)")


def release_sources(release: str) -> dict[str, Source]:
    """The two parquet directories of one Open Targets release."""
    base = f"https://ftp.ebi.ac.uk/pub/databases/opentargets/platform/{release}/output/etl/parquet/"
    return {
        "associations": Source(url=f"{base}associationByOverallDirect/", version=release, is_dir=True,
                               local_names=("associationByOverallDirect",)),
        "diseases": Source(url=f"{base}diseases/", version=release, is_dir=True, local_names=("diseases",)),
    }


@dataclass
class OpenTargetsConfig(FamilyConfig):
    """Open Targets options.

    Args:
        release: the platform release ("23.09", the reference's).
        therapeutic_area_min_score: the least direct association score that gives a target a disease's areas.
    """

    release: str = DEFAULT_RELEASE
    therapeutic_area_min_score: float = 0.5


class OpenTargets(FamilyBuilder):
    """Builder of the opentargets family."""

    BUILDER_CONFIG_CLASS = OpenTargetsConfig
    FAMILY = "opentargets"
    CITATION = _CITATION
    DESCRIPTION = _DESCRIPTION
    HOMEPAGE = _HOMEPAGE
    LICENSE = _LICENSE
    SOURCES = release_sources(DEFAULT_RELEASE)
    TASKS = (
        TaskSpec(
            name="Gene Disease Association",
            category="biological processes",
            type="regression",
            entity_types=("gene", "disease"),
            description="The direct overall association score of a (gene, disease) pair; the disease is given by "
                        "its name and description (auxiliary table opentargets_diseases).",
        ),
        TaskSpec(
            name="Therapeutic areas",
            category="biological processes",
            type="multi-label",
            derived_min_prevalence=0.05,
            description="The therapeutic areas of the diseases a target is directly associated with.",
        ),
    )
    PARTNERS = PartnerRecipe(table="diseases", id="id", text="Disease {name}: {description}")
    """Each disease is encoded from its name and description by the run's text encoder."""
    DIFFERENCES = """\
The reference averages scores of Ensembl ids that mygene maps to the same symbol; here Ensembl ids map through
HGNC, one id per gene, and a pair with conflicting scores is dropped (counted as n_conflicting).
"Therapeutic areas" is not a reference task."""

    def sources(self) -> dict[str, Source]:
        return release_sources(self.config.release)

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        associations = read_parquet_dir(paths["associations"], ASSOCIATION_COLUMNS)
        diseases = read_parquet_dir(paths["diseases"], DISEASE_COLUMNS)
        read.auxiliary["diseases"] = disease_table(diseases)
        yield association_task(associations, self.TASKS[0])
        yield therapeutic_area_task(associations, read.auxiliary["diseases"], self.TASKS[1],
                                    min_score=self.config.therapeutic_area_min_score)


def read_parquet_dir(folder: Path, required: Iterable[str]) -> pd.DataFrame:
    """Read a Spark parquet directory, checking that its parts are complete and have the required columns."""
    folder = Path(folder)
    parts = sorted(folder.glob("part-*.parquet"))
    if not parts:
        raise MissingSourceError(
            f"opentargets source '{folder}': no part-*.parquet files; mirror the whole '{folder.name}' directory "
            "of the release."
        )
    numbers = sorted(int(_PART.match(p.name).group(1)) for p in parts)
    if numbers != list(range(len(numbers))):
        gaps = sorted(set(range(numbers[-1] + 1)) - set(numbers))
        raise SourceFormatError(
            f"opentargets source '{folder}': partial download, parts {gaps[:5]} of 0..{numbers[-1]} are missing; "
            "mirror the directory again."
        )
    required = list(required)
    tables = []
    for part in parts:
        try:
            table = pq.read_table(part)
        except (pa.ArrowInvalid, OSError) as exc:
            raise SourceFormatError(
                f"opentargets source '{folder}': part '{part.name}' cannot be read ({exc}); it is truncated or "
                "corrupt, download it again."
            ) from exc
        missing = [c for c in required if c not in table.column_names]
        if missing:
            raise SourceFormatError(
                f"opentargets source '{folder}': part '{part.name}' lacks columns {missing} (found "
                f"{table.column_names[:10]}); pass the '{folder.name}' directory of an Open Targets release."
            )
        tables.append(table.select(required))
    return pa.concat_tables(tables).to_pandas()


def disease_table(diseases: pd.DataFrame) -> pd.DataFrame:
    """The `diseases` auxiliary table: id, name, description, therapeutic_areas (ids)."""
    return pd.DataFrame({
        "id": diseases["id"].astype(str),
        "name": diseases["name"].fillna("").astype(str),
        "description": diseases["description"].fillna("").astype(str),
        "therapeutic_areas": [list(v) if v is not None else [] for v in diseases["therapeuticAreas"]],
    }).sort_values("id", ignore_index=True)


def association_task(associations: pd.DataFrame, spec: TaskSpec) -> RawTask:
    """(target Ensembl id, disease id) -> direct overall score."""
    rows = pd.DataFrame({"entity": associations["targetId"].astype(str),
                         "entity_2": associations["diseaseId"].astype(str),
                         "value": associations["score"].astype(float)})
    return RawTask(spec=spec, rows=rows, source_key="associations", entity_id="ensembl_gene_id")


def therapeutic_area_task(associations: pd.DataFrame, diseases: pd.DataFrame, spec: TaskSpec, *,
                          min_score: float) -> RawTask:
    """Each target's therapeutic-area names, over its direct associations scoring at least `min_score`."""
    names = dict(zip(diseases["id"], diseases["name"]))
    areas = dict(zip(diseases["id"], diseases["therapeutic_areas"]))
    strong = associations[associations["score"] >= min_score]
    pairs = pd.DataFrame({"entity": strong["targetId"].astype(str), "area": strong["diseaseId"].map(areas)})
    pairs = pairs.dropna().explode("area").dropna()
    pairs["area"] = pairs["area"].map(lambda area: names.get(area, area))
    labels = pairs.groupby("entity")["area"].agg(lambda values: sorted(set(values)))
    rows = pd.DataFrame({"entity": labels.index, "label": labels.to_list()})
    return RawTask(spec=spec, rows=rows, source_key="associations", entity_id="ensembl_gene_id",
                   notes=[f"Associations with a score of at least {min_score}."])
