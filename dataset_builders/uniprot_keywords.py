"""uniprot_keywords: UniProt keywords of reviewed human (Swiss-Prot) entries, one multi-label task per category.

Sources: the entries, and UniProt's keyword list, which gives each keyword its category (keywlist.txt, the
`CA` line). The entries are read in any of three forms, recognised by their content:

- UniProt's REST stream as TSV (fields accession, gene_primary, keywordid: columns "Entry",
  "Gene Names (primary)", "Keyword ID"), the compact default;
- UniProt's REST stream as JSON (`{"results": [...]}`, the reference's input);
- a long gene x keyword table (`entrez_gene_id, keyword, keyword_accession`, one row per pair), the local form
  of ../shared/data/uniprot_keywords, keyed by Entrez id.

The keyword list is keywlist.txt or its TSV form (`keyword, accession, category`). An entry without a gene
name is skipped and counted (the reference skips them too); a keyword without a category is an error.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dataset_builders.base import FamilyBuilder, FamilyRead, RawTask, Source, read_table
from genebench.errors import SourceFormatError
from genebench.symbols import SymbolMapper
from genebench.tasks.metadata import TaskSpec
from genebench.textfiles import open_text

_CITATION = """\
@article{uniprot2023,
  title={UniProt: the Universal Protein Knowledgebase in 2023},
  author={{The UniProt Consortium}},
  journal={Nucleic Acids Research}, volume={51}, number={D1}, pages={D523--D531}, year={2023}
}"""
_DESCRIPTION = """\
UniProt keywords of reviewed human proteins (Swiss-Prot), grouped by keyword category.
"""
_HOMEPAGE = "https://www.uniprot.org/keywords"
_LICENSE = "CC-BY-4.0"
_REST = ("https://rest.uniprot.org/uniprotkb/stream?compressed=true&fields=accession%2Cgene_primary%2Ckeywordid"
         "&format=tsv&query=%28organism_id%3A9606%29+AND+%28reviewed%3Atrue%29")
_KEYWLIST = "https://ftp.uniprot.org/pub/databases/uniprot/current_release/knowledgebase/complete/docs/keywlist.txt"
DERIVED_MIN_PREVALENCE = 0.05
CATEGORIES = {
    "Ligand": "protein properties",
    "Domain": "protein properties",
    "PTM": "protein properties",
    "Biological process": "biological processes",
    "Cellular component": "localization",
    "Coding sequence diversity": "genomic properties",
    "Disease": "biological processes",
    "Molecular function": "protein properties",
    "Technical term": "protein properties",
}
"""Keyword category -> task category; the first three are the reference's tasks."""
REST_COLUMNS = ("Entry", "Gene Names (primary)", "Keyword ID")
LONG_COLUMNS = ("entrez_gene_id", "keyword", "keyword_accession")


def task_name(category: str) -> str:
    """The task of one keyword category, e.g. "UniProt keyword PTM"."""
    return f"UniProt keyword {category}"


class UniProtKeywords(FamilyBuilder):
    """Builder of the uniprot_keywords family."""

    FAMILY = "uniprot_keywords"
    CITATION = _CITATION
    DESCRIPTION = _DESCRIPTION
    HOMEPAGE = _HOMEPAGE
    LICENSE = _LICENSE
    SOURCES = {
        "entries": Source(url=_REST, version="current",
                          local_names=("uniprot_sprot_*_human_keywords*.tsv*", "uniprotkb_*.tsv*", "uniprot*.json*")),
        "keywords": Source(url=_KEYWLIST, version="current", local_names=("uniprot_keywlist*.tsv", "keywlist*.txt")),
    }
    TASKS = tuple(
        TaskSpec(name=task_name(category), category=kind, type="multi-label",
                 derived_min_prevalence=DERIVED_MIN_PREVALENCE,
                 description=f"The UniProt keywords of category '{category}' on a gene's reviewed human proteins.")
        for category, kind in CATEGORIES.items()
    )
    DIFFERENCES = """\
The reference keys each reviewed entry by its first gene name, from the full JSON stream; the local 2023_04
table keys genes by Entrez GeneID (entries without one are missing), so its gene counts are lower than the
paper's (e.g. Ligand 4,015 vs 6,673 genes: the Ligand category grew in 2024)."""

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        categories = read_keyword_list(paths["keywords"])
        pairs, entity_id, n_nameless = read_entries(paths["entries"])
        yield from category_tasks(pairs, categories, self.TASKS, entity_id=entity_id, n_nameless=n_nameless,
                                  source=paths["entries"].name)


def read_keyword_list(path: Path) -> dict[str, tuple[str, str]]:
    """Keyword accession -> (name, category), from keywlist.txt or its TSV form."""
    with open_text(path) as handle:
        head = handle.read(4096)
    if head.startswith("keyword\t") or "\taccession\t" in head.split("\n", 1)[0]:
        frame = read_table(path, sep="\t", family="uniprot_keywords", required=("keyword", "accession", "category"))
        return {acc: (name, cat) for name, acc, cat in zip(frame["keyword"], frame["accession"], frame["category"])
                if acc.startswith("KW-")}
    keywords, record = {}, {}
    with open_text(path) as handle:
        for line in handle:
            code, value = line[:2], line[5:].strip().rstrip(".")
            if code in ("ID", "AC", "CA"):
                record[code] = value
            elif code == "//":
                if "ID" in record and "AC" in record:
                    keywords[record["AC"]] = (record["ID"], record.get("CA", ""))
                record = {}
    if not keywords:
        raise SourceFormatError(
            f"uniprot_keywords source '{Path(path).name}': no keyword records (ID/AC/CA lines ending in //); "
            "pass UniProt's keywlist.txt or its TSV form with columns keyword, accession, category."
        )
    return keywords


def read_entries(path: Path) -> tuple[pd.DataFrame, str, int]:
    """Read the entries into (gene, keyword accession) pairs.

    Returns:
        (pairs with columns entity, keyword; the HGNC identifier the entities are: "symbol" or "entrez_id";
        the number of entries skipped for having no gene name).
    """
    with open_text(path) as handle:
        head = handle.read(64).lstrip()[:1]
    if head == "{":
        return _json_entries(path)
    with open_text(path) as handle:
        header = next(csv.reader(handle, delimiter="\t"), [])
    if all(c in header for c in LONG_COLUMNS):
        frame = read_table(path, sep="\t", family="uniprot_keywords", required=LONG_COLUMNS)
        return pd.DataFrame({"entity": frame["entrez_gene_id"], "keyword": frame["keyword_accession"]}), "entrez_id", 0
    frame = read_table(path, sep="\t", family="uniprot_keywords", required=REST_COLUMNS)
    genes = frame["Gene Names (primary)"].str.split(";").str[0].str.strip()
    named = genes != ""
    keywords = frame.loc[named, "Keyword ID"].str.split(";")
    pairs = pd.DataFrame({"entity": genes[named], "keyword": keywords}).explode("keyword")
    pairs["keyword"] = pairs["keyword"].str.strip()
    return pairs[pairs["keyword"].fillna("") != ""].reset_index(drop=True), "symbol", int((~named).sum())


def _json_entries(path: Path) -> tuple[pd.DataFrame, str, int]:
    try:
        with open_text(path) as handle:
            results = json.load(handle)["results"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise SourceFormatError(
            f"uniprot_keywords source '{Path(path).name}': expected UniProt's JSON stream ({{\"results\": [...]}})."
        ) from exc
    rows, n_nameless = [], 0
    for entry in results:
        genes = entry.get("genes") or [{}]
        name = (genes[0].get("geneName") or {}).get("value", "").strip()
        if not name:
            n_nameless += 1
            continue
        rows += [(name, kw["id"]) for kw in entry.get("keywords", [])]
    return pd.DataFrame(rows, columns=["entity", "keyword"]), "symbol", n_nameless


def category_tasks(pairs: pd.DataFrame, keywords: dict[str, tuple[str, str]], specs: Iterable[TaskSpec], *,
                   entity_id: str, n_nameless: int, source: str) -> list[RawTask]:
    """One multi-label task per keyword category: each gene's keyword names in that category."""
    unknown = sorted(set(pairs["keyword"]) - {acc for acc, (_, cat) in keywords.items() if cat})
    if unknown:
        raise SourceFormatError(
            f"uniprot_keywords: keywords {unknown[:5]} ({len(unknown)} in all) of '{source}' have no category in the "
            "keyword list; pass keywlist.txt from the same UniProt release as the entries."
        )
    by_category: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for gene, accession in zip(pairs["entity"], pairs["keyword"]):
        name, category = keywords[accession]
        by_category[category][gene].add(name)
    note = [f"{n_nameless} entries without a gene name were skipped."] if n_nameless else []
    tasks = []
    for spec in specs:
        genes = by_category.get(spec.name.removeprefix("UniProt keyword "), {})
        rows = pd.DataFrame({"entity": list(genes), "label": [sorted(v) for v in genes.values()]})
        tasks.append(RawTask(spec=spec, rows=rows, source_key="entries", entity_id=entity_id, notes=list(note)))
    return tasks
