"""opentargets: regression on (gene, disease) pairs, disease texts, therapeutic areas, partial parquet folders."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

import shutil  # noqa: E402
import tempfile  # noqa: E402

import datasets  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402

from dataset_builders.opentargets import OpenTargets, read_parquet_dir  # noqa: E402
from genebench.build import build_data  # noqa: E402
from genebench.errors import MissingSourceError, SourceFormatError  # noqa: E402

ASSOCIATIONS = "opentargets/associationByOverallDirect"


@pytest.fixture(scope="module")
def built(tmp_path_factory, fixtures, hgnc_file):
    return build_data(tmp_path_factory.mktemp("ot"), ["opentargets"], sources_dir=fixtures, hgnc=hgnc_file,
                      progress=False)


def test_gene_disease_association_is_a_pair_regression(built, fixtures):
    source = pq.read_table(fixtures / ASSOCIATIONS).to_pandas()
    task = built.load_task("Gene Disease Association")
    assert task.metadata.type == "regression" and task.metadata.entity_types == ("gene", "disease")
    assert task.entities.shape == (len(source), 2) and task.labels.dtype == np.float64
    assert sorted(task.labels.round(4)) == sorted(source["score"].round(4))
    assert set(task.entities[:, 1]) == set(source["diseaseId"])
    assert sorted(np.unique(task.fold_ids)) == [0, 1, 2, 3, 4]
    assert task.genes().tolist()[0] == "A4GALT"  # Ensembl ids became HGNC symbols


def test_disease_texts_are_an_auxiliary_config(built):
    diseases = built.auxiliary("opentargets", "diseases")
    row = diseases.set_index("id").loc["MONDO_0004975"]
    assert row["name"] == "Alzheimer disease" and row["description"].startswith("A progressive")
    loaded = datasets.load_dataset(str(built.path), "opentargets_diseases", split="train")
    assert len(loaded) == len(diseases) == 9
    with pytest.raises(KeyError, match="has no auxiliary table 'targets'"):
        built.auxiliary("opentargets", "targets")


def test_therapeutic_areas_come_from_strong_associations(built, fixtures):
    source = pq.read_table(fixtures / ASSOCIATIONS).to_pandas()
    task = built.load_task("Therapeutic areas")
    assert len(task.fold_ids) == source.loc[source["score"] >= 0.5, "targetId"].nunique()
    assert "nervous system disease" in task.metadata.label_names
    assert any(t.parent == "Therapeutic areas" for t in built.tasks())


def test_missing_part_is_a_partial_download(tmp_path, fixtures):
    folder = tmp_path / "associationByOverallDirect"
    shutil.copytree(fixtures / ASSOCIATIONS, folder)
    next(folder.glob("part-00000-*")).unlink()
    with pytest.raises(SourceFormatError, match=r"partial download, parts \[0\] of 0..1 are missing"):
        read_parquet_dir(folder, ("diseaseId", "targetId", "score"))


def test_truncated_part_and_missing_columns_are_errors(tmp_path, fixtures):
    folder = tmp_path / "associationByOverallDirect"
    shutil.copytree(fixtures / ASSOCIATIONS, folder)
    with pytest.raises(SourceFormatError, match=r"lacks columns \['datatypeId'\]"):
        read_parquet_dir(folder, ("diseaseId", "datatypeId"))
    part = next(folder.glob("part-00001-*"))
    part.write_bytes(part.read_bytes()[:100])
    with pytest.raises(SourceFormatError, match="cannot be read .* truncated or corrupt"):
        read_parquet_dir(folder, ("diseaseId",))


def test_empty_or_absent_folders_are_missing_sources(tmp_path, hgnc_file):
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingSourceError, match="no part-\\*.parquet files"):
        read_parquet_dir(tmp_path / "empty", ("diseaseId",))
    builder = OpenTargets(cache_dir=tempfile.mkdtemp(dir=tmp_path), hgnc=str(hgnc_file))
    with pytest.raises(MissingSourceError, match="cannot be fetched as one download; mirror it"):
        builder.download_and_prepare()


pytestmark = pytest.mark.slow  # real-data builds, refits, the published field: seconds each; CI runs them
