"""A sweep over every family's declared tasks and every task of the bundled snapshot (one test per task)."""

import numpy as np
import pytest

from dataset_builders import FAMILIES, get_builder_class
from genebench.constants import SNAPSHOT_DIR
from genebench.data import BenchmarkData
from genebench.tasks.metadata import CATEGORIES, TASK_TYPES
from genebench.tasks.task import TRAIN_ONLY
from genebench.tasks.types import TASK_TYPE_TABLE, task_type

DECLARED = [(family, spec) for family in FAMILIES for spec in get_builder_class(family).TASKS]
SNAPSHOT = BenchmarkData(SNAPSHOT_DIR)


def test_the_type_table_lists_every_task_type_once():
    assert tuple(TASK_TYPE_TABLE) == TASK_TYPES
    with pytest.raises(ValueError, match="task_type: expected one of .* found 'multilabel'"):
        task_type("multilabel")


def test_task_names_are_unique_across_families():
    names = [spec.name for _, spec in DECLARED] + [a for _, spec in DECLARED for a in spec.aliases]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(("family", "spec"), DECLARED, ids=[f"{f}:{s.name}" for f, s in DECLARED])
def test_every_declared_task_is_complete(family, spec):
    builder = get_builder_class(family)
    assert builder.FAMILY == family
    assert builder.LICENSE and builder.CITATION.strip() and builder.HOMEPAGE.startswith("http")
    assert spec.category in CATEGORIES and spec.type in TASK_TYPE_TABLE
    assert spec.description, "a task says what it asks"
    assert spec.entity_types[0] == "gene" and len(spec.entity_types) in (1, 2)
    if spec.type == "gene-pair binary":
        assert spec.entity_types == ("gene", "gene")


@pytest.mark.parametrize("meta", SNAPSHOT.tasks(), ids=lambda meta: meta.name)
def test_every_bundled_task_has_labels_and_folds(meta):
    task = SNAPSHOT.load_task(meta.name)
    assert meta.source_url and meta.license and meta.citation and meta.hgnc_version
    assert len(task.fold_ids) == len(task.labels) == len(task.entities) == meta.n_entities > 0
    held_out = task.fold_ids[task.fold_ids != TRAIN_ONLY]
    if meta.evaluation == "cv":
        assert sorted(set(held_out.tolist())) == list(range(meta.n_folds)), "every row in one of the folds"
    else:
        assert set(task.fold_ids.tolist()) == {TRAIN_ONLY, 0}, "a published train and test split"
    target = task_type(meta.type).target
    if target == "continuous":
        assert np.isfinite(task.labels).all()
    elif target == "multilabel":
        assert task.labels.shape == (meta.n_entities, len(meta.label_names))
        assert (task.labels.sum(axis=0) > 0).all() and (task.labels.sum(axis=1) > 0).all()
    else:
        assert set(np.unique(task.labels).tolist()) == set(range(len(meta.label_names)))
