"""Build hpa, uniprot_keywords and perturbqa from ../shared/data and check them against the reference's figures."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

import gzip  # noqa: E402

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dataset_builders.hpa import HPA, parse_proteinatlas  # noqa: E402
from dataset_builders.uniprot_keywords import descendants, read_keyword_list  # noqa: E402
from genebench.build import build_data  # noqa: E402
from genebench.card import size_comparison, unexplained_gaps  # noqa: E402
from genebench.symbols import SymbolMapper  # noqa: E402
from genebench.tasks.audit import audit_keywords  # noqa: E402

pytestmark = [pytest.mark.shared_data, pytest.mark.slow]

PERTURBQA_ROWS = {  # PerturbQA's published files (Genentech/PerturbQA 13531e8): rows, test rows
    "k562 de": (157_679, 23_212), "k562 dir": (19_980, 3_119), "rpe1 de": (187_089, 37_942),
    "rpe1 dir": (26_652, 5_365), "hepg2 de": (126_889, 25_749), "hepg2 dir": (17_860, 3_603),
    "jurkat de": (142_822, 29_138), "jurkat dir": (20_058, 4_121), "k562_set de": (25_841, 5_235),
    "k562_set dir": (14_071, 2_832),
}
UNIPROT_GENES = {  # genes per keyword category in Swiss-Prot 2023_04 (shared/data PROVENANCE.md)
    "Technical term": 18_050, "Domain": 12_198, "PTM": 11_980, "Coding sequence diversity": 10_187,
    "Biological process": 8_450, "Cellular component": 8_298, "Molecular function": 6_501, "Disease": 4_364,
    "Ligand": 4_015,
}


@pytest.fixture(scope="module")
def built(shared_data, tmp_path_factory):
    return build_data(tmp_path_factory.mktemp("more"), ["perturbqa", "uniprot_keywords", "hpa", "reactome", "humantfs"],
                      sources_dir=shared_data, controls=False, progress=False)


def test_perturbqa_rows_per_file_match_the_publication(built):
    for name, (rows, test_rows) in PERTURBQA_ROWS.items():
        task = built.load_task(f"PerturbQA {name}")
        assert (len(task.fold_ids), int((task.fold_ids == 0).sum())) == (rows, test_rows), name
    assert len(built.auxiliary("perturbqa", "gse")) == 25 + 52  # labelled gene and pert sets


def test_uniprot_gene_counts_match_the_source(built, shared_data):
    folder = shared_data / "uniprot_keywords"
    table = pd.read_csv(folder / "uniprot_sprot_2023_04_human_keywords_by_entrez.tsv.gz", sep="\t", dtype=str)
    assert table.groupby("category")["entrez_gene_id"].nunique().to_dict() == UNIPROT_GENES
    # the table's parents lost their own genes, so only genes with a leaf keyword of the category are read
    parents = set(descendants(read_keyword_list(folder / "uniprot_keywlist_2023_04.tsv")))
    leaves = table[~table["keyword"].isin(parents)]
    with_leaf = leaves.groupby("category")["entrez_gene_id"].nunique().to_dict()
    assert with_leaf == {**UNIPROT_GENES, "Ligand": 1890, "PTM": 11_963, "Biological process": 5586,
                         "Cellular component": 4813, "Molecular function": 6329, "Disease": 4357}
    dropped = {"Ligand": 18, "Domain": 1, "PTM": 3, "Biological process": 53, "Cellular component": 14,
               "Coding sequence diversity": 0, "Disease": 13, "Molecular function": 26, "Technical term": 0}
    for category, genes in with_leaf.items():
        meta = built.metadata(f"UniProt keyword {category}")
        report = meta.symbol_report
        assert report["n_source_rows"] == genes
        assert len(meta.dropped_labels) == dropped[category]
        assert set(table.loc[table["category"] == category, "keyword"]) & parents == set(meta.dropped_labels)
        # every gene is kept but for Entrez ids HGNC lacks (<= 7) and genes whose keywords are all too rare
        assert meta.n_entities == genes - report["n_unknown"] - report["n_below_min_class"]
        if category == "Technical term":
            # "Reference proteome" is on all but a handful of entries, so too few genes lack it to score it;
            # the 9,704 genes that had no other technical term leave the task with it.
            assert "Reference proteome" not in meta.label_names
            assert meta.n_entities == 8339
            continue
        assert genes - meta.n_entities <= 90, category


def test_keywords_left_out_at_build_are_not_audited(built):
    found = audit_keywords(built)
    component, function = (f"UniProt keyword {c}" for c in ("Cellular component", "Molecular function"))
    assert "Nucleus" in built.metadata(component).dropped_labels  # a parent keyword of the table
    assert "Transcription" in built.metadata("UniProt keyword Biological process").dropped_labels
    # "Cell membrane", a parent the table holds no gene of (its descendants' union is empty), is no label to drop
    assert set(found) == {component} and set(found[component]) == {"Cell membrane"}
    assert found[component]["Cell membrane"].startswith("'Cell membrane' annotates fewer than 5 genes")
    assert set(built.metadata(component).incomplete_labels) == {"Cell membrane"}
    assert "DNA-binding" in built.metadata(function).dropped_labels  # a parent (of DNA invertase, Nucleosome core)
    assert not built.metadata(function).incomplete_labels


def test_no_task_differs_from_the_papers_size_without_a_reason(built):
    sizes = {meta.name: meta.n_entities for meta in built.tasks()}
    assert unexplained_gaps(sizes) == []
    gaps = size_comparison(sizes).set_index("task")["gap"]
    assert gaps["UniProt keyword Ligand"] == "-71.8%" and gaps["UniProt keyword PTM"] == "-14.4%"
    assert "| UniProt keyword Ligand " in (built.path / "README.md").read_text()


def test_reactome_gene_count_matches_the_gmt(built, shared_data):
    lines = (shared_data / "reactome" / "ReactomePathways_2024-09-18.gmt").read_text().splitlines()
    genes = {g for line in lines for g in line.split("\t")[2:] if g}
    meta = built.metadata("Pathways")
    assert meta.symbol_report["n_source_rows"] == len(genes) == 11_668
    mapper = SymbolMapper.from_file(shared_data / "hgnc" / "hgnc_complete_set.txt.gz")
    assert meta.n_entities == len(set(mapper.resolve(genes).mapping.values()))  # renamed symbols merge
    assert len(meta.label_names) == 29


def test_hpa_v18_covers_six_of_the_reference_columns(built):
    names = {t.name for t in built.tasks() if t.family == "hpa" and t.parent is None}
    assert names == {"RNA tissue specificity", "RNA cancer specificity", "RNA cell line specificity",
                     "Chromosome", "Protein class", "Subcellular location"}
    assert built.metadata("Chromosome").n_entities > 19_000
    assert len(built.manifest["families"]["hpa"]["skipped_tasks"]) == 45


def test_hpa_v23_subsets_cover_every_reference_column(shared_data, tmp_path):
    folder = shared_data / "hpa_v23_subsets"
    frames = [pd.read_csv(gzip.open(p, "rt"), sep="\t", dtype=str, keep_default_na=False)
              for p in sorted(folder.glob("protein_class_*.tsv.gz"))]
    union = pd.concat(frames).drop_duplicates()
    assert len(union) == 3_375
    path = tmp_path / "proteinatlas.tsv"
    union.to_csv(path, sep="\t", index=False)
    mapper = SymbolMapper.from_file(shared_data / "hgnc" / "hgnc_complete_set.txt.gz")
    tasks, skipped = parse_proteinatlas(path, HPA.TASKS, mapper)
    assert not any("absent" in reason for reason in skipped.values())  # all 51 task columns are in v23
    assert set(skipped) == {"Pathology prognostics - Testis cancer"}  # too few prognostic genes in the subsets
    secretome = next(t for t in tasks if t.spec.name == "Secretome location")
    assert len(secretome.rows) == 1_912  # non-empty Secretome location over the union (PROVENANCE.md)
