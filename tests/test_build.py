import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from genebench import list_tasks, load_task
from genebench.build import build_data
from genebench.builders import FAMILIES as ALL_FAMILIES
from genebench.builders import get_builder_class
from genebench.card import PAPER_SIZES, size_comparison, unexplained_gaps
from genebench.data import BenchmarkData, open_data
from genebench.errors import MissingSourceError, SourceFormatError, UnknownTaskError
from genebench.published import task_map
from genebench.tasks.families import DOMINANT_SHARE
from genebench.tasks.folds import fold_imbalance

FAMILIES = ["humantfs", "hgnc", "reactome", "gene2gene"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, fixtures):
    out = tmp_path_factory.mktemp("data")
    build_data(out, FAMILIES, sources_dir=fixtures, progress=False)
    return out


def test_folder_holds_families_manifest_and_card(built):
    data = BenchmarkData(built)
    assert data.families == sorted(FAMILIES)
    manifest = json.loads((built / "genebench.json").read_text())
    assert set(manifest["files"]) >= {"humantfs/fold_0.parquet", "reactome/tasks.parquet", "symbols/hgnc.parquet"}
    card = (built / "README.md").read_text()
    assert "config_name: humantfs" in card and "| TF vs non-TF" in card and "CC-BY-4.0" in card
    data.verify()


def test_tasks_load_with_labels_folds_and_symbol_reports(built):
    tf = load_task("TF vs non-TF", data=built)
    assert tf.metadata.category == "regulatory functions"
    assert tf.metadata.symbol_report["n_renamed"] >= 1
    assert tf.labels.dtype == np.int64 and set(tf.labels) == {0, 1}
    assert sorted(set(tf.fold_ids)) == [0, 1, 2, 3, 4]
    pathways = load_task("Pathways", data=built)
    assert pathways.labels.shape == (137, 4)
    assert pathways.metadata.label_names == ("Developmental Biology", "Disease", "Metabolism", "Signal Transduction")
    derived = load_task("Pathways;Signal Transduction", data=built)
    assert derived.metadata.type == "derived binary" and derived.metadata.parent == "Pathways"
    assert np.array_equal(derived.fold_ids, pathways.fold_ids)
    assert np.array_equal(derived.labels, pathways.labels[:, 3])
    pairs = load_task("Gene2Gene", data=built)
    assert pairs.entities.shape[1] == 2
    assert "XK" in set(pairs.entities[:, 0])  # the source's "NA" is HGNC's previous symbol of XK


def test_rebuilding_gives_identical_files(built, fixtures, tmp_path):
    build_data(tmp_path, ["humantfs", "reactome"], sources_dir=fixtures, progress=False)
    for name in ("humantfs/fold_0.parquet", "reactome/fold_3.parquet", "reactome/tasks.parquet"):
        assert (tmp_path / name).read_bytes() == (built / name).read_bytes()


def test_list_tasks_filters_and_unknown_names(built):
    names = list_tasks(data=built, type="binary").names
    assert names == ["HLA class I vs class II", "TF vs non-TF"]
    assert len(list_tasks(data=built, family="reactome", include_derived=False)) == 1
    with pytest.raises(UnknownTaskError, match="Did you mean: 'TF vs non-TF'"):
        load_task("TF vs nonTF", data=built)
    with pytest.raises(UnknownTaskError, match="unknown category 'localisation'. Did you mean: 'localization'"):
        list_tasks(data=built, category="localisation")


def test_plain_load_dataset_works_without_genebench(built):
    script = textwrap.dedent(f"""
        import sys, datasets
        datasets.disable_progress_bars()
        ds = datasets.load_dataset({str(built)!r}, "reactome")
        tasks = datasets.load_dataset({str(built)!r}, "tasks", split="train")
        assert "genebench" not in sys.modules
        print(sorted(ds), ds["fold_0"][0]["task"], tasks.num_rows)
    """)
    env = {**os.environ, "HF_DATASETS_CACHE": str(built.parent / "hf-cache")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split()[:5] == ["['fold_0',", "'fold_1',", "'fold_2',", "'fold_3',", "'fold_4']"]
    assert out.stdout.split()[-1] == str(len(list_tasks(data=built)))


def test_failed_build_keeps_the_previous_family(built, fixtures, tmp_path):
    out = tmp_path / "data"
    shutil.copytree(built, out)
    sources = tmp_path / "sources"
    shutil.copytree(fixtures, sources)
    (sources / "reactome" / "ReactomePathways.gmt").write_text("not a gmt\n")
    with pytest.raises(SourceFormatError, match="ReactomePathways.gmt' line 1"):
        build_data(out, ["reactome"], sources_dir=sources, progress=False)
    assert not [p for p in out.iterdir() if p.name.startswith(".")]
    data = BenchmarkData(out)
    data.verify()
    assert load_task("Pathways", data=data).labels.shape == (137, 4)


def test_truncated_file_is_not_accepted(built, tmp_path):
    out = tmp_path / "data"
    shutil.copytree(built, out)
    path = out / "humantfs" / "fold_2.parquet"
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(SourceFormatError, match="humantfs/fold_2.parquet' is missing or does not match"):
        BenchmarkData(out).load_task("TF vs non-TF")


def test_missing_source_and_unknown_family(tmp_path, fixtures):
    with pytest.raises(UnknownTaskError, match="unknown task family 'humantf'. Did you mean: 'humantfs'"):
        build_data(tmp_path, ["humantf"], progress=False)
    with pytest.raises(MissingSourceError, match=r"no file matching \['DatabaseExtract_v_1.01.csv'"):
        build_data(tmp_path, ["humantfs"], sources_dir=tmp_path, hgnc=fixtures / "hgnc" / "hgnc_complete_set.txt",
                   progress=False)
    assert not (tmp_path / "humantfs").exists()


def test_not_a_data_folder(tmp_path):
    with pytest.raises(MissingSourceError, match="no genebench.json"):
        BenchmarkData(tmp_path)


def test_card_sets_each_task_size_beside_the_papers(built):
    card = (built / "README.md").read_text()
    assert "## Task sizes against the paper" in card
    sizes = {meta.name: meta.n_entities for meta in BenchmarkData(built).tasks()}
    table = size_comparison(sizes)
    # the excerpts are tiny, so the tasks the paper has are far below its sizes, with no reason recorded; the
    # HGNC excerpt holds all 44 HLA class I and II genes
    assert dict(zip(table["task"], table["reason"])) == {
        "Gene2Gene": "unexplained", "HLA class I vs class II": "", "Pathways": "unexplained",
        "TF vs non-TF": "unexplained"}
    assert sizes["HLA class I vs class II"] == 44 and sizes["TF vs non-TF"] == 45
    assert unexplained_gaps(sizes)[2] == "TF vs non-TF: 45 vs the paper's 2765 (-98.4%)"
    assert re.search(r"\| TF vs non-TF +\| Tf vs non-tf +\| +2765 \| +45 \| -98.4% +\| unexplained +\|", card)


def test_no_bundled_task_differs_from_the_papers_size_without_a_reason():
    sizes = {meta.name: meta.n_entities for meta in open_data().tasks()}
    assert unexplained_gaps(sizes) == []
    table = size_comparison(sizes)
    assert len(table) == 19  # every bundled task the paper also has
    gaps = table[table["reason"] != ""]
    assert list(gaps["task"]) == ["UniProt keyword Ligand", "UniProt keyword PTM"]


def test_paper_sizes_name_the_tasks_the_published_results_do():
    table = pd.read_csv(PAPER_SIZES, dtype=str, keep_default_na=False)
    mapped = task_map().assign(key=lambda frame: frame["paper_task"].str.lower()).set_index("key")["task"]
    both = table[table["paper_task"].str.lower().isin(mapped.index)]
    assert len(both) == 42
    assert (both["task"].to_numpy() == mapped.loc[both["paper_task"].str.lower()].fillna("").to_numpy()).all()
    declared = {spec.name for family in ALL_FAMILIES for spec in get_builder_class(family).TASKS}
    assert set(table["task"]) - {""} <= declared


def test_each_task_records_its_largest_family_and_fold_imbalance(built):
    data = BenchmarkData(built)
    tf = data.metadata("TF vs non-TF")
    report = tf.family_report
    assert report["fold_imbalance"] == round(fold_imbalance(data.load_task("TF vs non-TF", "family").fold_ids, 5), 4)
    assert report["fold_imbalance"] >= 1.0 and 0 < report["largest_family_share"] <= DOMINANT_SHARE
    derived, parent = (data.metadata(name).family_report for name in ("Pathways;Signal Transduction", "Pathways"))
    assert derived["fold_imbalance"] == parent["fold_imbalance"]  # one set of family folds
    share = f"{report['largest_family_share']:.0%}"
    assert re.search(rf"\| TF vs non-TF +\| humantfs .*\| {share} +\|", (built / "README.md").read_text())


pytestmark = pytest.mark.slow  # real-data builds, refits, the published field: seconds each; CI runs them
