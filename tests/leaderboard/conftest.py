"""Fixtures for the leaderboard tests: result folders and a fake Hub on 127.0.0.1."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import huggingface_hub.constants  # noqa: E402
import pytest  # noqa: E402
from fake_hub import FakeHub  # noqa: E402
from leaderboard_helpers import MODELS, write_model  # noqa: E402


@pytest.fixture
def make_results(tmp_path: Path) -> Callable[..., Path]:
    """Return a function writing one results root with the given models (default: all three)."""

    def make(name: str = "results", models: tuple[str, ...] = tuple(MODELS)) -> Path:
        root = tmp_path / name
        for model_id in models:
            adapter, n_parameters, level = MODELS[model_id]
            write_model(root, model_id, adapter=adapter, n_parameters=n_parameters, level=level)
        return root

    return make


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A fake Hub on 127.0.0.1 with an empty `genebench/genebench-results` dataset repo; Hub access allowed."""
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", "hf_fake_token_for_tests")
    with FakeHub() as hub:
        hub.create_repo("genebench/genebench-results")
        yield hub
