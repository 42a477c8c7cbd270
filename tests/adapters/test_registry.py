"""The lazy adapter registry and the protocol every adapter satisfies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from model_adapters import ADAPTERS, AdapterError, adapter_settings, get_adapter, options

INJECTED = {"revision", "client", "ncbi_client"}
"""Keywords that are not adapter options: --revision (every kind) and the test clients."""


@pytest.mark.parametrize("kind", list(ADAPTERS))
def test_every_input_kind_declares_exactly_the_settings_its_adapter_takes(kind):
    declared = [option.name for option in ADAPTERS[kind].options]
    assert len(declared) == len(set(declared))
    assert set(declared) == set(adapter_settings(kind)) - INJECTED
    for option in ADAPTERS[kind].options:
        assert options()[option.name] == option, f"option '{option.name}' means two things"


@pytest.mark.parametrize("kind", ["dna", "protein"])
def test_sequence_adapters_take_the_settings_their_base_class_receives(kind, hgnc):
    settings = {"revision": "abc123", "device": "cpu", "dtype": "float32", "batch_size": 2, "pooling": "cls",
                "trust_remote_code": True, "max_length": 64}
    adapter = get_adapter(kind, "org/model", hgnc=hgnc, **settings)
    assert (adapter.encoder.revision, adapter.encoder.dtype, adapter.encoder.batch_size, adapter.pooling) == (
        "abc123", "float32", 2, "cls")
    with pytest.raises(AdapterError, match=f"input kind '{kind}' has no setting 'vocabulary'; its settings are "):
        get_adapter(kind, "org/model", hgnc=hgnc, vocabulary="v.json")


def test_unknown_input_kind_lists_valid_kinds(hgnc):
    with pytest.raises(AdapterError, match="unknown input kind 'protien'. Did you mean: 'protein'.*with one of: token"):
        get_adapter("protien", "facebook/esm2_t6_8M_UR50D", hgnc=hgnc)


def test_registry_and_baselines_import_no_model_library():
    code = (
        "import sys, pandas as pd\n"
        "from model_adapters import get_adapter\n"
        "adapter = get_adapter('random', hgnc=pd.DataFrame({'symbol': ['TP53']}), dim=2)\n"
        "assert adapter.encode(['TP53']).vectors.shape == (1, 2)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.strip() == "[]"
