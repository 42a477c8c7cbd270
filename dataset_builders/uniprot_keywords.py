"""uniprot_keywords: UniProt keywords of reviewed human (Swiss-Prot) entries, one multi-label task per category.

Sources: the entries, and UniProt's keyword list, which gives each keyword its category (keywlist.txt, the
`CA` line). The entries are read in any of three forms, recognised by their content:

- UniProt's REST stream as TSV (fields accession, gene_primary, keywordid: columns "Entry",
  "Gene Names (primary)", "Keyword ID"), the compact default;
- UniProt's REST stream as JSON (`{"results": [...]}`, the reference's input);
- a long gene x keyword table (`entrez_gene_id, keyword, keyword_accession`, one row per pair), the local form
  of ../shared/data/uniprot_keywords, keyed by Entrez id.

The keyword list is keywlist.txt or its TSV form (`keyword, accession, category, hierarchy`). An entry without a
gene name is skipped and counted (the reference skips them too); a keyword without a category is an error.

**Parent keywords.** A keyword with descendants in the list's hierarchy (`HI` lines: "Molecular function:
Transferase; Kinase") is a parent. Whether a source's parents hold their own genes is what its provenance
states (`ENTRY_FORMS`), not an assumption: the UniProt stream annotates each entry with its parents itself, while
the long table lost them (the R package it comes from replaced every parent's genes with its descendants'
union), so from that table every parent is dropped, each with its reason in its task's `dropped_labels`.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from dataset_builders.base import FamilyBuilder, FamilyRead, RawTask, Rule, Source, check_rules, read_table
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


@dataclass(frozen=True)
class EntryForm:
    """One form the entries come in, and what its provenance promises.

    Attributes:
        name: the form in words.
        entity_id: the HGNC identifier its genes are given by ("symbol" or "entrez_id").
        parents_complete: whether a parent keyword holds the genes annotated with it directly.
        provenance: where the form comes from, and why its parents are (in)complete.
    """

    name: str
    entity_id: str
    parents_complete: bool
    provenance: str


_STREAM = ("UniProt annotates each entry with its keywords' parents itself, so a parent holds its own genes "
           "besides its descendants'.")
ENTRY_FORMS = {
    "rest-tsv": EntryForm("UniProt REST stream (TSV)", "symbol", True, _STREAM),
    "rest-json": EntryForm("UniProt REST stream (JSON)", "symbol", True, _STREAM),
    "long": EntryForm(
        "gene x keyword table by Entrez id (from the R package UniProtKeywords)", "entrez_id", False,
        "the package's build step format_geneset() replaced the genes of every keyword with descendants by the "
        "union of its descendants' genes, so the genes annotated with a parent directly are lost "
        "(../shared/data/uniprot_keywords/PROVENANCE.md)."),
}
"""What each entry form's provenance states; a form whose parents are incomplete has every parent dropped."""


class Keyword(NamedTuple):
    """One keyword of the keyword list: its name, category and hierarchy paths ("Ligand: Metal-binding; Zinc")."""

    name: str
    category: str
    hierarchy: tuple[str, ...] = ()


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
    RULES = (
        Rule("a parent's genes are not just its descendants' union", tolerance=0.5,
             remedy="its parents hold only their descendants' genes, as if their own were lost (as in the R package "
                    "UniProtKeywords' table); pass the UniProt stream as downloaded, or a form whose provenance states "
                    "its parents incomplete (ENTRY_FORMS), whose parents are dropped."),
        Rule("a child's genes are mostly its parent's", tolerance=0.1,
             remedy="UniProt annotates an entry with its keywords' parents; pass the stream as downloaded, with the "
                    "keyword list of its release."),
    )
    """What a source whose parents are complete promises (the UniProt stream annotates parents itself): few parents
    equal their descendants' union (Kinase holds kinases annotated with no child keyword; the damaged table has 102
    of 128 equal), and a child's genes carry its parent."""
    DIFFERENCES = """\
The reference keys each reviewed entry by its first gene name, from the full JSON stream; the local 2023_04
table keys genes by Entrez GeneID (entries without one are missing), so its gene counts are lower than the
paper's (e.g. Ligand 4,015 vs 6,673 genes: the Ligand category grew in 2024)."""

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        keywords = read_keyword_list(paths["keywords"])
        pairs, form, n_nameless = read_entries(paths["entries"])
        notes, drop = [], {}
        if form.parents_complete:
            sets: dict[str, set[str]] = defaultdict(set)
            for gene, accession in zip(pairs["entity"], pairs["keyword"]):
                sets[keywords[accession].name if accession in keywords else accession].add(gene)
            notes = check_rules(self.FAMILY, paths["entries"].name, self.RULES, sets, descendants(keywords))
        else:
            drop = parents_dropped(keywords, form)
        tasks = category_tasks(pairs, keywords, self.TASKS, entity_id=form.entity_id, n_nameless=n_nameless,
                               source=paths["entries"].name, drop=drop)
        for task in tasks:
            task.notes += notes
        yield from tasks


def read_keyword_list(path: Path) -> dict[str, Keyword]:
    """Keyword accession -> `Keyword`, from keywlist.txt or its TSV form."""
    with open_text(path) as handle:
        head = handle.read(4096)
    if head.startswith("keyword\t") or "\taccession\t" in head.split("\n", 1)[0]:
        frame = read_table(path, sep="\t", family="uniprot_keywords",
                           required=("keyword", "accession", "category", "hierarchy"))
        return {acc: Keyword(name, cat, tuple(p for p in paths.split(" | ") if p))
                for name, acc, cat, paths in zip(frame["keyword"], frame["accession"], frame["category"],
                                                 frame["hierarchy"]) if acc.startswith("KW-")}
    keywords, record, paths = {}, {}, []
    with open_text(path) as handle:
        for line in handle:
            code, value = line[:2], line[5:].strip().removesuffix(".")
            if code in ("ID", "AC", "CA"):
                record[code] = value
            elif code == "HI":
                paths.append(value)
            elif code == "//":
                if "ID" in record and "AC" in record:
                    keywords[record["AC"]] = Keyword(record["ID"], record.get("CA", ""), tuple(paths))
                record, paths = {}, []
    if not keywords:
        raise SourceFormatError(
            f"uniprot_keywords source '{Path(path).name}': no keyword records (ID/AC/CA lines ending in //); "
            "pass UniProt's keywlist.txt or its TSV form with columns keyword, accession, category."
        )
    return keywords


def descendants(keywords: dict[str, Keyword]) -> dict[str, frozenset[str]]:
    """Keyword name -> the names of its descendants, for every keyword that has any (category roots included).

    Examples:
        >>> below = descendants({"KW-0418": Keyword("Kinase", "Molecular function", ("Molecular function: "
        ...                      "Transferase; Kinase",)), "KW-0808": Keyword("Transferase", "Molecular function",
        ...                      ("Molecular function: Transferase",))})
        >>> {name: sorted(names) for name, names in below.items()}
        {'Molecular function': ['Kinase', 'Transferase'], 'Transferase': ['Kinase']}
    """
    below: dict[str, set[str]] = defaultdict(set)
    for keyword in keywords.values():
        for path in keyword.hierarchy:
            root, _, rest = path.partition(": ")
            for ancestor in [root, *rest.split("; ")][:-1]:
                below[ancestor].add(keyword.name)
    return {name: frozenset(names) for name, names in sorted(below.items())}


def parents_dropped(keywords: dict[str, Keyword], form: EntryForm) -> dict[str, str]:
    """Keyword name -> why it is dropped, for every keyword with descendants, from a form whose parents are
    incomplete (one reason for all, so the card lists them together)."""
    why = (f"a parent keyword (one with descendants in the keyword hierarchy) from a source whose parents are "
           f"incomplete, the {form.name}: {form.provenance}")
    return dict.fromkeys(descendants(keywords), why)


def read_entries(path: Path) -> tuple[pd.DataFrame, EntryForm, int]:
    """Read the entries into (gene, keyword accession) pairs.

    Returns:
        (pairs with columns entity, keyword; the form the entries came in (`ENTRY_FORMS`); the number of entries
        skipped for having no gene name).
    """
    with open_text(path) as handle:
        head = handle.read(64).lstrip()[:1]
    if head == "{":
        return _json_entries(path)
    with open_text(path) as handle:
        header = next(csv.reader(handle, delimiter="\t"), [])
    if all(c in header for c in LONG_COLUMNS):
        frame = read_table(path, sep="\t", family="uniprot_keywords", required=LONG_COLUMNS)
        pairs = pd.DataFrame({"entity": frame["entrez_gene_id"], "keyword": frame["keyword_accession"]})
        return pairs, ENTRY_FORMS["long"], 0
    frame = read_table(path, sep="\t", family="uniprot_keywords", required=REST_COLUMNS)
    genes = frame["Gene Names (primary)"].str.split(";").str[0].str.strip()
    named = genes != ""
    keywords = frame.loc[named, "Keyword ID"].str.split(";")
    pairs = pd.DataFrame({"entity": genes[named], "keyword": keywords}).explode("keyword")
    pairs["keyword"] = pairs["keyword"].str.strip()
    pairs = pairs[pairs["keyword"].fillna("") != ""].reset_index(drop=True)
    return pairs, ENTRY_FORMS["rest-tsv"], int((~named).sum())


def _json_entries(path: Path) -> tuple[pd.DataFrame, EntryForm, int]:
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
    return pd.DataFrame(rows, columns=["entity", "keyword"]), ENTRY_FORMS["rest-json"], n_nameless


def category_tasks(pairs: pd.DataFrame, keywords: dict[str, Keyword], specs: Iterable[TaskSpec], *,
                   entity_id: str, n_nameless: int, source: str, drop: dict[str, str] | None = None
                   ) -> list[RawTask]:
    """One multi-label task per keyword category: each gene's keyword names in that category, less the keywords
    in `drop` (name -> why), which its task records in `dropped_labels` where the source has them."""
    drop = drop or {}
    unknown = sorted(set(pairs["keyword"]) - {acc for acc, keyword in keywords.items() if keyword.category})
    if unknown:
        raise SourceFormatError(
            f"uniprot_keywords: keywords {unknown[:5]} ({len(unknown)} in all) of '{source}' have no category in the "
            "keyword list; pass keywlist.txt from the same UniProt release as the entries."
        )
    by_category: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    dropped: dict[str, dict[str, str]] = defaultdict(dict)
    for gene, accession in zip(pairs["entity"], pairs["keyword"]):
        name, category, _ = keywords[accession]
        if name in drop:
            dropped[category][name] = drop[name]
        else:
            by_category[category][gene].add(name)
    note = [f"{n_nameless} entries without a gene name were skipped."] if n_nameless else []
    tasks = []
    for spec in specs:
        category = spec.name.removeprefix("UniProt keyword ")
        genes = by_category.get(category, {})
        rows = pd.DataFrame({"entity": list(genes), "label": [sorted(v) for v in genes.values()]})
        tasks.append(RawTask(spec=spec, rows=rows, source_key="entries", entity_id=entity_id, notes=list(note),
                             dropped_labels=dict(sorted(dropped[category].items()))))
    return tasks
