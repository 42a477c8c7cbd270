import shutil

import pytest

from dataset_builders.base import check_rules
from dataset_builders.reactome import (
    Reactome,
    ReleaseMismatchError,
    read_gmt,
    read_relations,
    sub_pathways,
    top_level_task,
)
from genebench.build import build_data
from genebench.errors import SourceFormatError


@pytest.fixture
def sources(fixtures):
    folder = fixtures / "reactome"
    return folder / "ReactomePathways.gmt", folder / "ReactomePathwaysRelation.txt"


def test_genes_propagate_to_their_top_level_pathways(sources):
    gmt, relation = sources
    parents = read_relations(relation)
    assert "R-BTA-109606" not in parents  # other species are left out
    raw = top_level_task(read_gmt(gmt), parents, Reactome.TASKS[0], gmt, relation)
    labels = dict(zip(raw.rows["entity"], raw.rows["label"]))
    # NTRK1 is listed only in "Activation of TRKA receptors", four levels under "Signal Transduction".
    assert labels["NTRK1"] == ["Signal Transduction"]
    assert raw.notes == ["4 top-level pathways."]
    assert len(raw.rows) == 159


def test_release_mismatch_is_refused(sources, tmp_path):
    gmt, relation = sources
    lines = [line for line in relation.read_text().splitlines() if "R-HSA-187015" not in line]
    stale = tmp_path / "ReactomePathwaysRelation.txt"
    stale.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReleaseMismatchError, match=r"different releases: 1 gmt pathways \(e.g. \['R-HSA-187015'\]\)"):
        top_level_task(read_gmt(gmt), read_relations(stale), Reactome.TASKS[0], gmt, stale)


def test_malformed_gmt_line(tmp_path):
    path = tmp_path / "ReactomePathways.gmt"
    path.write_text("Some pathway\tGENE1\tGENE2\n")
    with pytest.raises(SourceFormatError, match="line 1: expected 'name<TAB>R-HSA-id<TAB>genes...'"):
        read_gmt(path)


def test_a_top_level_pathway_without_its_sub_pathways_genes_ends_the_build(fixtures, hgnc_file, tmp_path):
    folder = tmp_path / "reactome"
    folder.mkdir()
    shutil.copy(fixtures / "reactome" / "ReactomePathwaysRelation.txt", folder)
    lines = (fixtures / "reactome" / "ReactomePathways.gmt").read_text().splitlines()
    # "Signal Transduction" cut to its first 10 genes, as the excerpt first had it: its sub-pathways' are missing
    cut = ["\t".join(line.split("\t")[:12]) if line.startswith("Signal Transduction\t") else line for line in lines]
    (folder / "ReactomePathways.gmt").write_text("\n".join(cut) + "\n")
    expected = (r"^reactome source 'ReactomePathways.gmt' breaks the rule \"a parent's genes include its "
                r"descendants'\" \(1 of 4 checked, e.g. Signal Transduction \(lacks 21 of its descendants' 22 "
                r"genes\)\); the gmt lists")
    with pytest.raises(SourceFormatError, match=expected):
        build_data(tmp_path / "out", ["reactome"], sources_dir=tmp_path, hgnc=hgnc_file, controls=False,
                   progress=False)


def test_the_excerpt_keeps_the_rule(fixtures):
    gmt = read_gmt(fixtures / "reactome" / "ReactomePathways.gmt")
    below = sub_pathways(gmt, read_relations(fixtures / "reactome" / "ReactomePathwaysRelation.txt"))
    assert sorted(below) == ["Developmental Biology", "Disease", "Metabolism", "Signal Transduction"]
    sets = {name: set(genes) for name, genes in gmt.values()}
    assert check_rules("reactome", "ReactomePathways.gmt", Reactome.RULES, sets, below) == []
