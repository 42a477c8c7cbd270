"""Tasks worth averaging, on the bundled snapshot (built from ../shared/data): incomplete keywords, merged tasks."""

import numpy as np
import pytest

from genebench.data import open_data
from genebench.tasks.audit import MERGE_JACCARD, audit_keywords

CC, MF = "UniProt keyword Cellular component", "UniProt keyword Molecular function"


def test_keywords_are_measured_against_hpa_and_humantfs():
    """With the parent keywords dropped at build ("Nucleus", "DNA-binding" held only their children's genes), the
    audit is left with the one leaf keyword the release barely annotates."""
    found = audit_keywords(open_data())
    assert set(found) == {CC} and set(found[CC]) == {"Cell membrane"}
    assert found[CC]["Cell membrane"].startswith(
        "'Cell membrane' annotates fewer than 5 genes (below the minimum class size), covering 0 of the 442 genes "
        "of HPA plasma membrane")


def test_incomplete_labels_are_marked_in_the_metadata():
    data = open_data()
    assert set(data.metadata(CC).incomplete_labels) == {"Cell membrane"}
    assert not data.metadata(MF).incomplete_labels
    assert data.metadata(CC).incomplete is None  # the other labels of the parent hold most of its positives
    assert "Cell membrane" not in data.metadata(CC).label_names  # below the minimum class size: no label to mark


def test_near_identical_derived_tasks_are_one_task_with_an_alias():
    data = open_data()
    kept = data.metadata("bivalent vs Lys4-only-methylated")
    assert kept.aliases == ("Lys4-only-methylated vs non-methylated",)
    with pytest.warns(UserWarning, match="is now called"):
        assert data.metadata("Lys4-only-methylated vs non-methylated").name == kept.name
    assert "Lys4-only-methylated vs non-methylated" not in {meta.name for meta in data.tasks()}
    parent = data.load_task(MF)
    names = list(parent.metadata.label_names)
    kept = [meta for meta in data.tasks() if meta.parent == MF]
    columns = np.stack([parent.labels[:, names.index(meta.label_names[1])] for meta in kept], axis=1).astype(bool)
    for i in range(len(kept)):  # no near-identical pair is left
        for j in range(i + 1, len(kept)):
            assert (columns[:, i] & columns[:, j]).sum() / (columns[:, i] | columns[:, j]).sum() < MERGE_JACCARD
