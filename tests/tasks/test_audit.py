"""Tasks worth averaging, on the bundled snapshot (built from ../shared/data): incomplete keywords, merged tasks."""

import numpy as np
import pytest

from genebench.data import open_data
from genebench.tasks.audit import MERGE_JACCARD, audit_keywords

CC, MF = "UniProt keyword Cellular component", "UniProt keyword Molecular function"


def test_keywords_are_measured_against_hpa_and_humantfs():
    found = audit_keywords(open_data())
    assert found[CC]["Nucleus"].startswith(
        "'Nucleus' annotates 43 genes, covering 27 of the 2012 genes of HPA nuclear locations in this task "
        "(1.3% < 50%)")
    assert found[CC]["Cell membrane"].startswith(
        "'Cell membrane' annotates fewer than 5 genes (below the minimum class size), covering 0 of the 817 genes "
        "of HPA plasma membrane")
    assert "covering 1 of the 660 genes of HumanTFs transcription factors" in found[MF]["DNA-binding"]
    assert "Transcription" not in found.get("UniProt keyword Biological process", {})  # it covers the TFs


def test_incomplete_labels_are_marked_in_the_metadata():
    data = open_data()
    assert set(data.metadata(CC).incomplete_labels) == {"Nucleus", "Cell membrane"}
    assert set(data.metadata(MF).incomplete_labels) == {"DNA-binding"}
    assert data.metadata(CC).incomplete is None  # the other labels of the parent hold most of its positives
    task = data.load_task(CC)
    nucleus = task.labels[:, task.metadata.label_names.index("Nucleus")]
    assert nucleus.mean() < 0.05  # below the derived-task prevalence: no task of its own to mark


def test_near_identical_derived_tasks_are_one_task_with_an_alias():
    data = open_data()
    gpcr = data.metadata(f"{MF};G-protein coupled receptor")
    assert gpcr.aliases == (f"{MF};Transducer",)
    with pytest.warns(UserWarning, match="is now called"):
        assert data.metadata(f"{MF};Transducer").name == gpcr.name
    assert f"{MF};Transducer" not in {meta.name for meta in data.tasks()}
    parent = data.load_task(MF)
    names = list(parent.metadata.label_names)
    a, b = (parent.labels[:, names.index(label)].astype(bool) for label in ("G-protein coupled receptor", "Transducer"))
    assert (a & b).sum() / (a | b).sum() >= MERGE_JACCARD
    domain = data.metadata("UniProt keyword Domain;Transmembrane")
    assert domain.aliases == ("UniProt keyword Domain;Transmembrane helix",)
    kept = [meta for meta in data.tasks() if meta.parent == MF]
    columns = np.stack([parent.labels[:, names.index(meta.label_names[1])] for meta in kept], axis=1).astype(bool)
    for i in range(len(kept)):  # no near-identical pair is left
        for j in range(i + 1, len(kept)):
            assert (columns[:, i] & columns[:, j]).sum() / (columns[:, i] | columns[:, j]).sum() < MERGE_JACCARD
