"""A real local Ray instance (2 CPUs, no dashboard), started once for the tests that need one."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_models import save_tiny_bert

from genebench.optional import RAY


@pytest.fixture(scope="session")
def ray_cluster():
    """`ray`, initialised with a local 2-CPU instance; `RayEngine` uses it and leaves it running."""
    ray = pytest.importorskip("ray", reason=f"Ray is not installed; {RAY}")
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=256 * 2**20, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def bert_dir(tmp_path_factory) -> Path:
    """A tiny 2-layer BERT (see tests/tiny_models.py)."""
    return save_tiny_bert(tmp_path_factory.mktemp("bert"))
