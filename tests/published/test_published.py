"""The paper's published results as bundled data: hash-checked, every paper task mapped, in the results schema."""

import shutil

import numpy as np
import pandas as pd
import pytest

from genebench import published
from genebench.builders import FAMILIES, get_builder_class
from genebench.errors import ResultsError, SourceFormatError
from genebench.results import results_frame


@pytest.fixture(scope="module")
def declared() -> dict:
    """Every task a family declares, by name: (family, category, type)."""
    return {spec.name: (family, spec.category, spec.type) for family in FAMILIES
            for spec in get_builder_class(family).TASKS}


def test_bundled_table_is_the_papers_file(shared_data):
    source = shared_data / "paper" / "published_results.csv.gz"
    assert published.bundled_file("published_results.csv.gz").read_bytes() == source.read_bytes()
    table = published.long_table()
    assert len(table) == 14265
    assert table["task_name"].nunique() == 62 and table["Model"].nunique() == 9


def test_every_paper_task_is_mapped_to_a_declared_task(declared):
    paper_tasks = set(published.long_table()["task_name"])
    mapping = published.task_map()
    assert sorted(mapping["paper_task"]) == sorted(paper_tasks)  # each exactly once
    mapped = mapping[mapping["relation"] != "none"]
    for row in mapped.itertuples():
        assert row.task in declared, f"'{row.paper_task}' maps to '{row.task}', which no family declares"
        assert (row.family, row.category, row.type) == declared[row.task], row.paper_task
    unmapped = mapping[mapping["relation"] == "none"]
    assert (unmapped["task"] == "").all() and (unmapped["note"].str.len() > 20).all()
    assert set(mapping["relation"]) <= set(published.RELATIONS)
    assert mapping["relation"].value_counts().to_dict() == {"same": 54, "protocol": 7, "none": 1}


def test_the_n1_swap_is_recorded():
    mapping = published.task_map().set_index("paper_task")
    assert mapping.at["N1 network", "task"] == "N1 targets"
    assert mapping.at["N1 targets", "task"] == "N1 network"
    assert "swapped" in mapping.at["N1 network", "note"]


def test_multi_label_tasks_are_marked_protocol_and_hpa_carries_its_release():
    mapping = published.task_map()
    assert set(mapping.loc[mapping["type"] == "multi-label", "relation"]) == {"protocol"}
    hpa = (mapping["family"] == "hpa") & (mapping["relation"] != "none")
    assert set(mapping.loc[hpa, "paper_source"]) == {"hpa.proteinatlas v23"}


def test_a_changed_file_is_refused(tmp_path):
    folder = tmp_path / "published"
    shutil.copytree(published.HERE, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    assert published.bundled_file("task_map.csv", folder) == folder / "task_map.csv"
    with open(folder / "task_map.csv", "a") as handle:
        handle.write("Extra task,,hpa,localization,categorical,none,,added by hand\n")
    with pytest.raises(SourceFormatError, match=r"task_map.csv' does not match its sha256"):
        published.bundled_file("task_map.csv", folder)
    (folder / "manifest.json").write_text("{}")
    with pytest.raises(SourceFormatError, match=r"lists no 'models.csv'"):
        published.bundled_file("models.csv", folder)


def test_published_results_are_task_results_with_the_papers_numbers():
    results = published.published_results(["bag of words", "mpnet"])  # display name, paper id, any case
    assert len(results) == 2 * 62
    frame = results_frame(results)
    assert set(frame["model"]) == {"arXiv-2412.04075/Bag-of-Words", "arXiv-2412.04075/MPNet"}
    assert set(frame["data_hash"]) == {published.DATA_HASH}
    long = published.long_table()
    hla = long[(long["Model"] == "Bag of Words") & (long["task_name"] == "HLA class I vs class II")
               & (long["metric"] == "roc_auc")].sort_values("fold")["score"].to_numpy()
    row = frame[(frame["model"] == "arXiv-2412.04075/Bag-of-Words") & (frame["task"] == "HLA class I vs class II")
                & frame["is_main"]].iloc[0]
    assert row["mean"] == pytest.approx(hla.mean(), abs=1e-12) and row["n_folds"] == 5
    by_task = {(r.model.id, r.task.name): r for r in results}
    n1 = by_task[("arXiv-2412.04075/Bag-of-Words", "N1 targets")]
    assert n1.task.aliases == ("N1 network",) and n1.config["paper_task"] == "N1 network"
    assert n1.probe["multilabel_auc"] == "predictions" and n1.config["commit"] == published.COMMIT
    none = by_task[("arXiv-2412.04075/MPNet", "NeXtProt evidence")]
    assert none.task.family == "paper" and none.config["relation"] == "none"


def test_fold_spread_is_the_sample_std():
    scores = published.fold_scores().set_index(["model", "paper_task"])
    hla = scores.loc[("Bag of Words", "HLA class I vs class II")]
    assert hla["sd"] == pytest.approx(np.std(hla["folds"], ddof=1)) and round(hla["sd"], 3) == 0.266
    assert round(scores.loc[("Bag of Words", "Chromosome"), "mean"], 3) == 0.584
    assert not scores["sd"].isna().any() and isinstance(scores, pd.DataFrame)


def test_an_unknown_model_is_one_line():
    with pytest.raises(ResultsError, match=r"--published ESM2: expected one of the paper's models MPNet, "):
        published.select_models(["ESM2"])
