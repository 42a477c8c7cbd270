"""hpa: v23 and v18 column layouts, label cleaning, skipped columns, bad releases."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

import pytest  # noqa: E402

from dataset_builders.hpa import HPA, HPAConfig, parse_proteinatlas  # noqa: E402
from genebench.build import build_data  # noqa: E402
from genebench.errors import SourceFormatError  # noqa: E402
from genebench.symbols import SymbolMapper  # noqa: E402


@pytest.fixture(scope="module")
def mapper(hgnc_file) -> SymbolMapper:
    return SymbolMapper.from_file(hgnc_file)


def _by_name(tasks):
    return {task.spec.name: task for task in tasks}


def test_v23_layout_gives_every_declared_column(fixtures, mapper):
    tasks, skipped = parse_proteinatlas(fixtures / "hpa" / "proteinatlas_v23_excerpt.tsv", HPA.TASKS, mapper)
    assert len(tasks) + len(skipped) == len(HPA.TASKS) == 51
    assert all("fewer than 2 classes" in reason for reason in skipped.values())  # no column is absent in v23
    named = _by_name(tasks)
    prognostics = {x for name, t in named.items() if name.startswith("Pathology") for x in t.rows["label"]}
    assert prognostics <= {"unprognostic", "prognostic favorable", "prognostic unfavorable"}
    # v23 writes "Nucleoplasm,Cytosol" without a space in Subcellular location
    locations = {x for labels in named["Subcellular location"].rows["label"] for x in labels}
    assert not any("," in x for x in locations) and "Cytosol" in locations


def test_v18_layout_skips_absent_columns_and_reads_renamed_ones(fixtures, mapper):
    tasks, skipped = parse_proteinatlas(fixtures / "hpa" / "proteinatlas_v18.1_excerpt.tsv", HPA.TASKS, mapper)
    named = _by_name(tasks)
    assert set(named) == {"RNA tissue specificity", "RNA cancer specificity", "RNA cell line specificity",
                          "Chromosome", "Protein class", "Subcellular location"}
    assert skipped["Secretome location"].startswith("column 'Secretome location' is absent")
    assert "Built from this release's column 'RNA tissue category'." in named["RNA tissue specificity"].notes
    locations = {x for labels in named["Subcellular location"].rows["label"] for x in labels}
    assert not any("<br>" in x for x in locations) and "Nucleoplasm" in locations


def test_build_records_min_class_size_and_derived_tasks(tmp_path, fixtures, hgnc_file):
    data = build_data(tmp_path, ["hpa"], sources_dir=fixtures, hgnc=hgnc_file, controls=False,
                      progress=False)  # the controls are tests/test_controls.py's
    chromosome = data.metadata("Chromosome")
    assert chromosome.min_class_size == 5 and chromosome.type == "categorical"
    task = data.load_task("Chromosome")
    assert min(int((task.labels == k).sum()) for k in range(len(chromosome.label_names))) >= 5
    derived = [t for t in data.tasks() if t.parent == "Protein class"]
    assert derived and all(t.type == "derived binary" for t in derived)
    assert data.manifest["families"]["hpa"]["skipped_tasks"]
    assert "Differences from the reference" in (tmp_path / "README.md").read_text()


def test_release_without_gene_column_is_one_clear_error(tmp_path, mapper):
    bad = tmp_path / "proteinatlas.tsv"
    bad.write_text("Symbol\tChromosome\nTP53\t17\n")
    with pytest.raises(SourceFormatError, match=r"expected columns \['Gene'\], found \['Symbol', 'Chromosome'\]"):
        parse_proteinatlas(bad, HPA.TASKS, mapper)


def test_release_with_only_unknown_columns_is_one_clear_error(tmp_path, mapper):
    bad = tmp_path / "proteinatlas.tsv"
    bad.write_text("Gene\tChrom\tTissue specificity (renamed)\nTP53\t17\tx\n")
    with pytest.raises(SourceFormatError, match="none of the 51 task columns"):
        parse_proteinatlas(bad, HPA.TASKS, mapper)


def test_unexpected_ccd_value_is_an_error(tmp_path, mapper):
    bad = tmp_path / "proteinatlas.tsv"
    rows = "".join(f"G{i}\t{'Maybe' if i == 0 else 'Yes' if i % 2 else 'No'}\n" for i in range(12))
    bad.write_text("Gene\tCCD Protein\n" + rows)
    with pytest.raises(SourceFormatError, match=r"hpa column 'CCD Protein': values \['Maybe'\]"):
        parse_proteinatlas(bad, HPA.TASKS, mapper)


def test_release_is_a_validated_config_field():
    assert HPAConfig(name="hpa", release="v24").release == "v24"
    with pytest.raises(SourceFormatError, match="expected a release like 'v23'"):
        HPAConfig(name="hpa", release="latest")
