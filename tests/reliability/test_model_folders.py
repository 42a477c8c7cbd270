"""A damaged model folder is refused in one line by both runtimes, before anything loads or is written.

Each case damages a copy of a tiny sentence-transformers model (a 2-layer BERT saved with `save_pretrained`, plus
mean pooling and Normalize) the way real folders break: a download cut short, a tokenizer file from elsewhere, a
config edited for other weights, a JSON file that is not JSON.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability_helpers import TASK, fails, paper_result_files, snapshot
from tiny_models import save_tiny_bert


@pytest.fixture(scope="module")
def sentence_model(tmp_path_factory) -> Path:
    """A tiny BERT sentence-transformers model: Transformer, mean Pooling, Normalize."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    bert = save_tiny_bert(tmp_path_factory.mktemp("bert"))
    path = tmp_path_factory.mktemp("sentence-bert")
    SentenceTransformer(modules=[Transformer(str(bert), max_seq_length=32), Pooling(16, "mean"), Normalize()],
                        device="cpu").save(str(path))
    return path


def _truncate_weights(folder: Path) -> None:
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])


def _edit_config(**changes: int) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, **changes}))

    return edit


DAMAGES: dict[str, tuple[Callable[[Path], None], list[str]]] = {
    "truncated weights": (_truncate_weights, ["model.safetensors is truncated (", "interrupted download",
                                              "download the model again"]),
    "tokenizer from elsewhere": (lambda f: (f / "tokenizer.json").write_text('{"version": "1.0"}'),
                                 ["tokenizer.json cannot be read by tokenizers", "download the model again"]),
    "12 layers for 2": (_edit_config(num_hidden_layers=12),
                        ["config.json does not match the weights in model.safetensors: num_hidden_layers 12 "
                         "(weights: 2)", "use the config.json that came with these weights"]),
    "width and vocabulary": (_edit_config(hidden_size=32, vocab_size=30522),
                             ["vocab_size 30522 (weights: 88), hidden_size 32 (weights: 16)"]),
    "modules.json not JSON": (lambda f: (f / "modules.json").write_text('[{"idx": 0,'),
                              ["modules.json is not valid JSON (", "download the model again"]),
    "pooling config not JSON": (lambda f: (f / "1_Pooling" / "config.json").write_bytes(b"\x00\x01binary"),
                                ["1_Pooling/config.json is not valid JSON ("]),
}


@pytest.mark.parametrize("runtime", ["numpy", "torch"])
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_model_folder_stops_in_one_line_and_writes_nothing(cli, sentence_model, tmp_path, monkeypatch,
                                                                     damage, runtime):
    folder = tmp_path / "model"
    shutil.copytree(sentence_model, folder)
    damage_folder, fragments = DAMAGES[damage]
    damage_folder(folder)
    monkeypatch.setenv("GENEBENCH_CACHE", str(tmp_path / "cache"))
    before = snapshot(folder)
    outcome = cli("run", "--model", folder, "--name", "tests/tiny-bert", "--input", "description", "--runtime", runtime,
                  "--tasks", TASK, "--out", tmp_path / "results")
    line = fails(outcome, "run", f"model '{folder}': ", *fragments)
    assert len(line) < 300 and "Traceback" not in outcome.out
    assert snapshot(tmp_path / "results") == {} and snapshot(tmp_path / "cache") == {}
    assert snapshot(folder) == before  # the folder is read, never repaired behind the user's back


def test_the_intact_folder_runs_on_both_runtimes(cli, sentence_model, tmp_path, monkeypatch):
    """The checks refuse only damage: the same folder, intact, is scored by either runtime."""
    monkeypatch.setenv("GENEBENCH_CACHE", str(tmp_path / "cache"))
    for runtime in ("numpy", "torch"):
        outcome = cli("run", "--model", sentence_model, "--name", "tests/tiny-bert", "--input", "description",
                      "--runtime", runtime, "--tasks", TASK, "--out", tmp_path / runtime)
        assert outcome.code == 0, outcome.err[-2000:]
        assert [json.loads(p.read_text())["task"]["name"] for p in paper_result_files(tmp_path / runtime)] == [TASK]
    notes = [json.loads(next((tmp_path / runtime).rglob("model_meta.json")).read_text())["notes"]
             for runtime in ("numpy", "torch")]
    assert notes[0] == notes[1]  # one batching plan: the same tokens, padding and truncation on either runtime
    assert (notes[0]["n_tokens"], notes[0]["n_padding_tokens"], notes[0]["padding"]) == (84921, 424, 0.005)
