"""reactome: "Pathways", each gene's top-level Reactome pathways, plus one binary task per pathway.

A gene listed in any pathway of ReactomePathways.gmt is propagated up the hierarchy of
ReactomePathwaysRelation.txt to every top-level human pathway (one that is never a child) above it.
The two files must come from the same release: every pathway id in the gmt must occur in the relation file.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dataset_builders.base import FamilyBuilder, FamilyRead, RawTask, Rule, Source, check_rules
from genebench.errors import SourceFormatError
from genebench.symbols import SymbolMapper
from genebench.tasks.metadata import TaskSpec
from genebench.textfiles import open_text

_CITATION = """\
@article{milacic2024reactome,
  title={The Reactome Pathway Knowledgebase 2024},
  author={Milacic, Marija and Beavers, Deidre and Conley, Patrick and others},
  journal={Nucleic Acids Research}, volume={52}, number={D1}, pages={D672--D678}, year={2024}
}"""
_DESCRIPTION = """\
Reactome: membership of human genes in the top-level pathways of the Reactome hierarchy.
"""
_HOMEPAGE = "https://reactome.org/"
_LICENSE = "CC-BY-4.0"
HUMAN_PREFIX = "R-HSA-"


class ReleaseMismatchError(SourceFormatError):
    """The gmt and the hierarchy come from different Reactome releases."""


class Reactome(FamilyBuilder):
    """Builder of the reactome family."""

    FAMILY = "reactome"
    CITATION = _CITATION
    DESCRIPTION = _DESCRIPTION
    HOMEPAGE = _HOMEPAGE
    LICENSE = _LICENSE
    SOURCES = {
        "gmt": Source(url="https://reactome.org/download/current/ReactomePathways.gmt.zip", version="current",
                      local_names=("ReactomePathways*.gmt", "ReactomePathways.gmt.zip")),
        "relation": Source(url="https://reactome.org/download/current/ReactomePathwaysRelation.txt",
                           version="current", local_names=("ReactomePathwaysRelation*.txt",)),
    }
    TASKS = (
        TaskSpec(
            name="Pathways",
            category="biological processes",
            type="multi-label",
            derived_min_prevalence=0.0,
            description="The top-level Reactome pathways a gene takes part in, through any sub-pathway.",
        ),
    )

    RULES = (Rule("a parent's genes include its descendants'",
                  remedy="the gmt lists each top-level pathway with every gene of its sub-pathways; pass "
                         "ReactomePathways.gmt as downloaded, with the hierarchy of its release."),)
    """Reactome lists a top-level pathway's genes as its sub-pathways' union. Equality holds for 28 of the 29 in the
    2024-09 release; "Circadian Clock" also holds reactions of its own (34 of its 70 genes are in no sub-pathway),
    so the rule checked is the inclusion, which holds for all."""

    def read_tasks(self, paths: dict[str, Path], mapper: SymbolMapper, read: FamilyRead) -> Iterable[RawTask]:
        pathways = read_gmt(paths["gmt"])
        task, parents = self._matching_task(pathways, paths, read)
        sets = {name: set(genes) for name, genes in pathways.values()}
        task.notes += check_rules(self.FAMILY, paths["gmt"].name, self.RULES, sets, sub_pathways(pathways, parents))
        yield task

    def _matching_task(self, pathways: dict[str, tuple[str, list[str]]], paths: dict[str, Path], read: FamilyRead
                       ) -> tuple[RawTask, dict[str, set[str]]]:
        """The task from the first hierarchy file that matches the gmt's release, and that hierarchy."""
        chosen = paths["relation"]
        others = [p for p in self.local_candidates("relation", self.SOURCES["relation"]) if p != chosen]
        try:
            parents = read_relations(chosen)
            return top_level_task(pathways, parents, self.TASKS[0], paths["gmt"], chosen), parents
        except ReleaseMismatchError:
            if not others:
                raise
        for relation in others:  # another local hierarchy file may match the gmt's release
            parents = read_relations(relation)
            try:
                task = top_level_task(pathways, parents, self.TASKS[0], paths["gmt"], relation)
            except ReleaseMismatchError:
                continue
            read.source_versions["relation"] = f"{read.sources['relation'].version} (local: {relation.name})"
            return task, parents
        raise ReleaseMismatchError(
            f"reactome: no hierarchy file among {[chosen.name, *[p.name for p in others]]} matches the release of "
            f"'{paths['gmt'].name}'; download ReactomePathways.gmt and ReactomePathwaysRelation.txt together."
        )


def read_gmt(path: Path) -> dict[str, tuple[str, list[str]]]:
    """Read ReactomePathways.gmt: pathway id -> (name, genes). Lines are name, id, gene, gene, ..."""
    pathways = {}
    with open_text(path) as handle:
        for number, fields in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if len(fields) < 3 or not fields[1].startswith("R-"):
                raise SourceFormatError(
                    f"reactome source '{Path(path).name}' line {number}: expected 'name<TAB>R-HSA-id<TAB>genes...', "
                    f"found {fields[:3]}; pass the ReactomePathways.gmt download."
                )
            pathways[fields[1]] = (fields[0], [g for g in fields[2:] if g])
    return pathways


def read_relations(path: Path) -> dict[str, set[str]]:
    """Read ReactomePathwaysRelation.txt (parent<TAB>child, all species): human child -> parents."""
    parents: dict[str, set[str]] = defaultdict(set)
    with open_text(path) as handle:
        for number, fields in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if number == 1 and fields == ["parent", "child"]:
                continue
            if len(fields) != 2 or not fields[0].startswith("R-"):
                raise SourceFormatError(
                    f"reactome source '{Path(path).name}' line {number}: expected 'parent<TAB>child' pathway ids, "
                    f"found {fields[:3]}; pass the ReactomePathwaysRelation.txt download."
                )
            if fields[1].startswith(HUMAN_PREFIX):
                parents[fields[1]].add(fields[0])
    return dict(parents)


def top_levels(pathway: str, parents: dict[str, set[str]], memo: dict[str, frozenset[str]]) -> frozenset[str]:
    """The top-level ancestors of a pathway (itself if it has no parent), walked without recursion.

    Raises:
        SourceFormatError: the hierarchy has a cycle (a pathway is its own ancestor).
    """
    stack, expanded = [pathway], set()
    while stack:
        node = stack[-1]
        if node in memo:
            stack.pop()
            continue
        above = parents.get(node, set())
        pending = [p for p in sorted(above) if p not in memo]
        if not pending:
            memo[node] = frozenset().union(*(memo[p] for p in above)) if above else frozenset({node})
            expanded.discard(node)
            stack.pop()
            continue
        if node in expanded or any(p in expanded for p in pending):
            cycle = next((p for p in pending if p in expanded), node)
            raise SourceFormatError(f"reactome relation source: the pathway hierarchy has a cycle through "
                                    f"'{cycle}' (a pathway is its own ancestor); pass an unedited "
                                    "ReactomePathwaysRelation.txt.")
        expanded.add(node)
        stack.extend(pending)
    return memo[pathway]


def sub_pathways(pathways: dict[str, tuple[str, list[str]]], parents: dict[str, set[str]]
                 ) -> dict[str, frozenset[str]]:
    """Top-level pathway name -> the names of every pathway below it (of those in the gmt)."""
    memo: dict[str, frozenset[str]] = {}
    below: dict[str, set[str]] = defaultdict(set)
    for pid, (name, _) in pathways.items():
        for top in top_levels(pid, parents, memo) - {pid}:
            below[pathways[top][0] if top in pathways else top].add(name)
    return {name: frozenset(names) for name, names in below.items()}


def top_level_task(pathways: dict[str, tuple[str, list[str]]], parents: dict[str, set[str]], spec: TaskSpec,
                   gmt: Path, relation: Path) -> RawTask:
    """Propagate each gene to its top-level pathways; check the gmt and the hierarchy match."""
    known = set(parents) | {p for ps in parents.values() for p in ps}
    absent = sorted(p for p in pathways if p not in known)
    if absent:
        raise ReleaseMismatchError(
            f"reactome sources '{gmt.name}' and '{relation.name}' are from different releases: {len(absent)} gmt "
            f"pathways (e.g. {absent[:3]}) are absent from the hierarchy; download both from the same release."
        )
    memo: dict[str, frozenset[str]] = {}
    names = {pid: name for pid, (name, _) in pathways.items()}
    genes: dict[str, set[str]] = defaultdict(set)
    for pid, (_, members) in pathways.items():
        tops = {names.get(top, top) for top in top_levels(pid, parents, memo)}
        for gene in members:
            genes[gene] |= tops
    rows = pd.DataFrame({"entity": list(genes), "label": [sorted(v) for v in genes.values()]})
    n_top = len({top for pid in pathways for top in top_levels(pid, parents, memo)})
    return RawTask(spec=spec, rows=rows, source_key="gmt", notes=[f"{n_top} top-level pathways."])
