"""uniprot_keywords: the entry forms agree, categories, nameless entries, uncategorised and parent keywords."""

import os
import shutil

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dataset_builders.base import check_min_class_size  # noqa: E402
from dataset_builders.uniprot_keywords import (  # noqa: E402
    ENTRY_FORMS,
    UniProtKeywords,
    category_tasks,
    descendants,
    read_entries,
    read_keyword_list,
)
from genebench.build import build_data  # noqa: E402
from genebench.data import open_data  # noqa: E402
from genebench.errors import SourceFormatError  # noqa: E402

FOLDER = "uniprot_keywords"


def test_keyword_list_forms_agree(fixtures):
    from_tsv = read_keyword_list(fixtures / FOLDER / "uniprot_keywlist_2023_04_excerpt.tsv")
    from_txt = read_keyword_list(fixtures / FOLDER / "keywlist_excerpt.txt")
    assert from_tsv == from_txt
    assert from_tsv["KW-0007"] == ("Acetylation", "PTM", ("PTM: Acetylation",))
    assert from_tsv["KW-0418"].hierarchy == ("Molecular function: Transferase; Kinase",)


def _labels(path, keywords):
    pairs, form, nameless = read_entries(path)
    tasks = category_tasks(pairs, keywords, UniProtKeywords.TASKS, entity_id=form.entity_id, n_nameless=nameless,
                           source=path.name)
    return {t.spec.name: dict(zip(t.rows["entity"], map(tuple, t.rows["label"]))) for t in tasks}, nameless


def test_rest_tsv_and_json_streams_agree(fixtures):
    keywords = read_keyword_list(fixtures / FOLDER / "uniprot_keywlist_2023_04_excerpt.tsv")
    tsv, nameless_tsv = _labels(fixtures / FOLDER / "uniprotkb_human_reviewed_excerpt.tsv", keywords)
    js, nameless_json = _labels(fixtures / FOLDER / "uniprotkb_human_reviewed_excerpt.json", keywords)
    assert tsv == js
    assert nameless_tsv == nameless_json == 1
    assert "Acetylation" in tsv["UniProt keyword PTM"]["CLTA"]


def test_local_table_matches_the_stream(fixtures, hgnc_file):
    keywords = read_keyword_list(fixtures / FOLDER / "uniprot_keywlist_2023_04_excerpt.tsv")
    pairs, form, _ = read_entries(fixtures / FOLDER / "uniprot_sprot_2023_04_human_keywords_by_entrez_excerpt.tsv")
    assert form == ENTRY_FORMS["long"] and form.entity_id == "entrez_id"
    hgnc = pd.read_csv(hgnc_file, sep="\t", dtype=str, keep_default_na=False)
    clta = hgnc.loc[hgnc["symbol"] == "CLTA", "entrez_id"].item()
    local = {keywords[k].name for k in pairs.loc[pairs["entity"] == clta, "keyword"] if keywords[k].category == "PTM"}
    stream, _ = _labels(fixtures / FOLDER / "uniprotkb_human_reviewed_excerpt.tsv", keywords)
    assert set(stream["UniProt keyword PTM"]["CLTA"]) == local


def test_build_gives_nine_category_tasks_with_derived_ones(tmp_path, fixtures, hgnc_file):
    data = build_data(tmp_path, ["uniprot_keywords"], sources_dir=fixtures, hgnc=hgnc_file, controls=False,
                      progress=False)  # the controls are tests/test_controls.py's
    parents = [t for t in data.tasks() if t.type == "multi-label"]
    skipped = data.manifest["families"]["uniprot_keywords"]["skipped_tasks"]
    no_label = "no label has 5 genes with it and 5 without it in this source."
    # the excerpt is small: these categories have no keyword with 5 genes with it and 5 without it
    assert skipped == {f"UniProt keyword {c}": no_label for c in ("Ligand", "Coding sequence diversity", "Disease")}
    assert {t.name for t in parents} | set(skipped) == {f"UniProt keyword {c}" for c in (
        "Ligand", "Domain", "PTM", "Biological process", "Cellular component", "Coding sequence diversity",
        "Disease", "Molecular function", "Technical term")}
    # every gene of the excerpt has "Reference proteome": with no genes left without it, the label is dropped,
    # and so are the 11 genes that had no other technical term.
    technical = data.metadata("UniProt keyword Technical term")
    assert technical.n_entities == 79 and "Reference proteome" not in technical.label_names
    assert technical.symbol_report["n_below_min_class"] == 11
    derived = [t for t in data.tasks() if t.parent == "UniProt keyword PTM"]
    task = data.load_task("UniProt keyword PTM")
    for meta in derived:
        column = task.metadata.label_names.index(meta.label_names[1])
        assert task.labels[:, column].mean() >= 0.05


def test_keyword_without_category_is_one_clear_error(fixtures):
    keywords = read_keyword_list(fixtures / FOLDER / "uniprot_keywlist_2023_04_excerpt.tsv")
    del keywords["KW-0007"]
    pairs, form, _ = read_entries(fixtures / FOLDER / "uniprotkb_human_reviewed_excerpt.tsv")
    with pytest.raises(SourceFormatError, match=r"keywords \['KW-0007'\] .* have no category in the keyword list"):
        category_tasks(pairs, keywords, UniProtKeywords.TASKS, entity_id=form.entity_id, n_nameless=0, source="x.tsv")


def test_nameless_entries_are_reported_in_the_task_notes(fixtures):
    keywords = read_keyword_list(fixtures / FOLDER / "keywlist_excerpt.txt")
    pairs, form, nameless = read_entries(fixtures / FOLDER / "uniprotkb_human_reviewed_excerpt.json")
    tasks = category_tasks(pairs, keywords, UniProtKeywords.TASKS, entity_id=form.entity_id, n_nameless=nameless,
                           source="x.json")
    assert tasks[0].notes == ["1 entries without a gene name were skipped."]


def test_unknown_entry_format_is_one_clear_error(tmp_path):
    bad = tmp_path / "uniprotkb.tsv"
    bad.write_text("Accession\tGene\nP04637\tTP53\n")
    expected = r"expected columns \['Entry', 'Gene Names \(primary\)', 'Keyword ID'\]"
    with pytest.raises(SourceFormatError, match=expected):
        read_entries(bad)


def _keyword_labels(data) -> dict[str, set[str]]:
    """Task -> the keywords its labels are built on (a derived task: its positive label)."""
    tasks = [t for t in data.tasks() if t.family == "uniprot_keywords"]
    return {t.name: set(t.label_names[1:] if t.type == "derived binary" else t.label_names) for t in tasks}


def test_parents_of_the_long_table_are_dropped_with_their_reason(tmp_path, fixtures, hgnc_file):
    keywords = read_keyword_list(fixtures / FOLDER / "uniprot_keywlist_2023_04_excerpt.tsv")
    parents = set(descendants(keywords))
    assert {"Kinase", "Transferase", "Membrane", "Metal-binding"} <= parents
    data = build_data(tmp_path, ["uniprot_keywords"], sources_dir=fixtures, hgnc=hgnc_file, controls=False,
                      progress=False)
    assert all(not labels & parents for labels in _keyword_labels(data).values())
    function = data.metadata("UniProt keyword Molecular function")
    # the excerpt's genes carry these parents of the category; each is dropped, with its source's reason
    assert {"Kinase", "Transferase", "Receptor", "Hydrolase"} <= set(function.dropped_labels)
    assert set(function.dropped_labels) <= parents
    reason = function.dropped_labels["Kinase"]
    assert reason.startswith("a parent keyword (one with descendants in the keyword hierarchy) from a source whose "
                             "parents are incomplete, the gene x keyword table by Entrez id")
    assert "format_geneset()" in reason
    card = (tmp_path / "README.md").read_text()
    assert f"- 'UniProt keyword Molecular function': {len(function.dropped_labels)} labels dropped (" in card
    assert reason in card
    assert "Tyrosine-protein kinase" in function.label_names  # leaves stay
    assert all(not t.dropped_labels for t in data.tasks() if t.type == "derived binary")


def _stream(tmp_path, fixtures, edit=None):
    """A sources folder with the REST TSV excerpt (changed by `edit(entries, parents)`) and the keyword list."""
    folder = tmp_path / "sources" / FOLDER
    folder.mkdir(parents=True)
    shutil.copy(fixtures / FOLDER / "keywlist_excerpt.txt", folder / "keywlist_excerpt.txt")
    frame = pd.read_csv(fixtures / FOLDER / "uniprotkb_human_reviewed_excerpt.tsv", sep="\t", dtype=str,
                        keep_default_na=False)
    if edit is not None:
        keywords = read_keyword_list(folder / "keywlist_excerpt.txt")
        accession = {k.name: acc for acc, k in keywords.items()}
        entries = [set(filter(None, ids.split(";"))) for ids in frame["Keyword ID"]]
        edit(entries, {accession[p]: {accession[d] for d in ds if d in accession}
                       for p, ds in descendants(keywords).items() if p in accession})
        frame["Keyword ID"] = [";".join(sorted(ids)) for ids in entries]
    frame.to_csv(folder / "uniprotkb_human_reviewed_excerpt.tsv", sep="\t", index=False)
    return tmp_path / "sources"


def _own_genes(entries, parents):
    """Every parent the excerpt holds is also annotated on the first entry that lacks it (its own gene)."""
    for parent in parents:
        if any(parent in ids for ids in entries):
            next(ids for ids in entries if ids and parent not in ids).add(parent)


def test_a_stream_with_complete_parents_keeps_them(tmp_path, fixtures, hgnc_file):
    sources = _stream(tmp_path, fixtures, _own_genes)
    data = build_data(tmp_path / "out", ["uniprot_keywords"], sources_dir=sources, hgnc=hgnc_file,
                      controls=False, progress=False)
    function = data.metadata("UniProt keyword Molecular function")
    assert {"Kinase", "Transferase"} <= set(function.label_names)
    assert function.dropped_labels == {}
    assert ENTRY_FORMS["rest-tsv"].parents_complete and not ENTRY_FORMS["long"].parents_complete


def test_a_stream_whose_parents_are_their_descendants_union_ends_the_build(tmp_path, fixtures, hgnc_file):
    # the REST excerpt holds the long table's pairs, so its parents are exactly their descendants' union
    sources = _stream(tmp_path, fixtures)
    expected = (r"^uniprot_keywords source 'uniprotkb_human_reviewed_excerpt.tsv' breaks the rule \"a parent's genes "
                r"are not just its descendants' union\" \(32 of 34 checked, e.g. Adaptive immunity \(12 genes, "
                r"exactly its descendants' union\); Cell cycle \(2 genes, exactly its descendants' union\); .*; its "
                r"parents hold only their descendants' genes[^\n]*$")
    with pytest.raises(SourceFormatError, match=expected):
        build_data(tmp_path / "out", ["uniprot_keywords"], sources_dir=sources, hgnc=hgnc_file, controls=False,
                   progress=False)


def test_a_stream_whose_children_lack_their_parent_ends_the_build(tmp_path, fixtures, hgnc_file):
    def children_without_parents(entries, parents):
        _own_genes(entries, parents)
        for parent, children in parents.items():  # the parent stays on its own gene only
            for ids in entries:
                if ids & children:
                    ids.discard(parent)

    sources = _stream(tmp_path, fixtures, children_without_parents)
    expected = (r"breaks the rule \"a child's genes are mostly its parent's\" \(37 of 37 checked, e.g. "
                r"MHC II \(0% of 12 genes under Adaptive immunity\)")
    with pytest.raises(SourceFormatError, match=expected):
        build_data(tmp_path / "out", ["uniprot_keywords"], sources_dir=sources, hgnc=hgnc_file, controls=False,
                   progress=False)


def test_labels_with_the_same_genes_are_dropped_with_their_reason(tmp_path, fixtures, hgnc_file):
    folder = tmp_path / "sources" / FOLDER
    folder.mkdir(parents=True)
    shutil.copy(fixtures / FOLDER / "uniprot_keywlist_2023_04_excerpt.tsv", folder)
    table = pd.read_csv(fixtures / FOLDER / "uniprot_sprot_2023_04_human_keywords_by_entrez_excerpt.tsv", sep="\t",
                        dtype=str)
    # a synthetic twin: every gene with "Acetylation" (PTM) also gets "Sulfation" (PTM), and no other does
    twin = table[table["keyword"] == "Acetylation"].assign(keyword="Sulfation", keyword_accession="KW-0765")
    pd.concat([table[table["keyword"] != "Sulfation"], twin]).to_csv(
        folder / "uniprot_sprot_2023_04_human_keywords_by_entrez_excerpt.tsv", sep="\t", index=False)
    data = build_data(tmp_path / "out", ["uniprot_keywords"], sources_dir=tmp_path / "sources", hgnc=hgnc_file,
                      controls=False, progress=False)
    ptm = data.metadata("UniProt keyword PTM")
    n = len(twin)
    assert ptm.dropped_labels["Sulfation"] == (f"the same {n} genes as 'Acetylation' (no two labels of a task "
                                                    "hold the same genes)")
    assert "Acetylation" in ptm.label_names and "Sulfation" not in ptm.label_names


def test_no_snapshot_label_is_built_on_a_parent_keyword(shared_data):
    parents = set(descendants(read_keyword_list(shared_data / FOLDER / "uniprot_keywlist_2023_04.tsv")))
    built_on_parents = {task: sorted(labels & parents) for task, labels in _keyword_labels(open_data()).items()
                        if labels & parents}
    assert built_on_parents == {}


def test_a_label_below_the_minimum_class_size_is_one_clear_error():
    spec = UniProtKeywords.TASKS[2]
    classes = np.array([[1, 0]] * 6 + [[0, 1]] * 4)
    expected = (r"^uniprot_keywords task 'UniProt keyword PTM' breaks the rule \"no label has fewer positives than the "
                r"minimum class size \(5\)\": Oxidation \(4\); ")
    with pytest.raises(SourceFormatError, match=expected):
        check_min_class_size("uniprot_keywords", spec, classes, ("Acetylation", "Oxidation"))
    check_min_class_size("uniprot_keywords", spec, classes[:, :1], ("Acetylation",))
