"""Shared fixtures. HF libraries must never reach the network in tests."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own genebench cache, so no test reads another's downloads."""
    monkeypatch.setenv("GENEBENCH_CACHE", str(tmp_path_factory.mktemp("genebench-cache")))


@pytest.fixture(scope="session")
def fixtures() -> Path:
    """The folder of small source excerpts (see fixtures/README.md)."""
    return FIXTURES


@pytest.fixture(scope="session")
def hgnc_file() -> Path:
    """A real HGNC complete-set excerpt."""
    return FIXTURES / "hgnc" / "hgnc_complete_set.txt"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, the real source snapshots; tests using it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real source snapshots not found at {SHARED_DATA} (../shared/data beside the repo)")
    return SHARED_DATA
