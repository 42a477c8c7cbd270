import pytest

from dataset_builders.reactome import Reactome, ReleaseMismatchError, read_gmt, read_relations, top_level_task
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
