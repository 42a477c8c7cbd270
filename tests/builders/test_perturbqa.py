"""perturbqa: published rows and splits kept exactly, auxiliary gene-set tables, bad split values."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

import shutil  # noqa: E402

import datasets  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dataset_builders.perturbqa import PerturbQA, read_gse, read_pairs, task_name  # noqa: E402
from genebench.build import build_data  # noqa: E402
from genebench.data import BenchmarkData  # noqa: E402
from genebench.errors import SourceFormatError  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory, fixtures, hgnc_file) -> BenchmarkData:
    out = tmp_path_factory.mktemp("perturbqa")
    return build_data(out, ["perturbqa"], sources_dir=fixtures, hgnc=hgnc_file, progress=False)


def test_every_published_row_and_split_is_kept(built, fixtures):
    for line in ("k562", "rpe1", "hepg2", "jurkat", "k562_set"):
        for kind in ("de", "dir"):
            source = pd.read_csv(fixtures / "perturbqa" / f"{line}-{kind}.csv", dtype=str, keep_default_na=False)
            task = built.load_task(task_name(line, kind))
            assert len(task.fold_ids) == len(source) == 24
            assert (task.fold_ids == 0).sum() == (source["split"] == "test").sum() == 8
            assert task.labels.sum() == (source["label"] == "1").sum()
            assert task.n_splits == 1


def test_unresolved_symbols_are_kept_and_counted(built, fixtures):
    meta = built.metadata("PerturbQA k562 de")
    assert meta.evaluation == "train-test" and meta.entity_types == ("gene", "gene")
    # the HGNC fixture holds ~350 genes, so most PerturbQA symbols cannot be resolved: they stay as published
    assert meta.symbol_report["n_kept_unresolved"] > 0
    task = built.load_task("PerturbQA k562 de")
    source = pd.read_csv(fixtures / "perturbqa" / "k562-de.csv", dtype=str, keep_default_na=False)
    assert task.entities[:, 1].tolist() == source["gene"].tolist()
    assert built.metadata("PerturbQA k562_set de").entity_types == ("gene", "gene set")


def test_gene_set_tables_are_exported(built, fixtures):
    gse = built.auxiliary("perturbqa", "gse")
    assert gse["label"].notna().all()
    assert (gse["kind"] == "pert").sum() == 4  # 4 of the fixture's 8 pert sets have a label
    assert gse.loc[gse["kind"] == "pert", "label"].iloc[0] == "m6A mRNA methylation"
    everything = read_gse(fixtures / "perturbqa" / "k562_pert-gse.json", "pert", skip_empty=False)
    assert len(everything) == 8
    mapping = built.auxiliary("perturbqa", "set_mapping")
    assert mapping["cluster"].iloc[0] == "1-mitochondrial respiratory chain"
    loaded = datasets.load_dataset(str(built.path), "perturbqa_gse", split="train")
    assert len(loaded) == len(gse)
    rows = datasets.load_dataset(str(built.path), "perturbqa", split="test")
    assert len(rows) == 10 * 8


def test_unexpected_split_value_is_one_clear_error(tmp_path, fixtures):
    bad = tmp_path / "k562-de.csv"
    text = (fixtures / "perturbqa" / "k562-de.csv").read_text().replace(",test", ",validation", 1)
    bad.write_text(text)
    spec = PerturbQA.TASKS[0]
    with pytest.raises(SourceFormatError, match=r"column 'split' holds \['validation'\]; expected \['train', 'test'\]"):
        read_pairs(bad, spec, source_key="k562-de")


def test_failed_build_leaves_the_previous_family(tmp_path, fixtures, hgnc_file):
    sources = tmp_path / "sources"
    shutil.copytree(fixtures / "perturbqa", sources / "perturbqa")
    out = tmp_path / "data"
    build_data(out, ["perturbqa"], sources_dir=sources, hgnc=hgnc_file, progress=False)
    before = sorted(p.name for p in (out / "perturbqa").iterdir())
    broken = sources / "perturbqa" / "rpe1-dir.csv"
    broken.write_text(broken.read_text().replace(",train", ",dev", 1))
    with pytest.raises(SourceFormatError, match="rpe1-dir.csv"):
        build_data(out, ["perturbqa"], sources_dir=sources, hgnc=hgnc_file, progress=False)
    assert sorted(p.name for p in (out / "perturbqa").iterdir()) == before
    assert not [p for p in out.iterdir() if p.name.startswith(".staging")]
    assert len(BenchmarkData(out).load_task("PerturbQA rpe1 dir").fold_ids) == 24
