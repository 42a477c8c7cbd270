"""`--engine ray` against a real local Ray instance: same scores as a local run, killed workers, failures."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from genebench.catalogue import list_tasks
from genebench.cli import main
from genebench.constants import SNAPSHOT_DIR
from genebench.data import BenchmarkData
from genebench.embeddings import GeneEmbeddings
from genebench.errors import DistributedError

pytestmark = pytest.mark.slow

# Small binary tasks, and a multi-label task with some of its derived tasks (scored in one Ray task).
TASKS = ["HLA class I vs class II", "long vs short range TF", "N1 network"]
SHARED = "PerturbQA hepg2 dir"  # a train-test pair task: the same split under both fold schemes
FAMILY = ["UniProt keyword Ligand"] + [meta.name for meta in list_tasks(family="uniprot_keywords")
                                       if meta.parent == "UniProt keyword Ligand"][:4]


def _results(out: Path) -> dict[tuple[str, str], dict]:
    """Every result of a run, by (fold scheme, task name)."""
    files = [p for p in out.rglob("*.json") if p.name != "model_meta.json"]
    return {(r["probe"]["scheme"], r["task"]["name"]): r for r in (json.loads(p.read_text()) for p in files)}


def _run(engine: str, tasks: list[str], out: Path, cache: Path, monkeypatch,
         *model_args: str) -> dict[tuple[str, str], dict]:
    monkeypatch.setenv("GENEBENCH_CACHE", str(cache))  # each engine encodes for itself
    code = main(["run", *model_args, "--tasks", *tasks, "--out", str(out), "--engine", engine])
    assert code == 0
    return _results(out)


def _cache_file(cache: Path) -> GeneEmbeddings:
    (path,) = (cache / "embeddings").rglob("*.parquet")
    return GeneEmbeddings.load(path)


@pytest.mark.parametrize("kind", ["tiny HF model", "precomputed table"])
def test_scores_are_bit_identical_between_local_and_ray(kind, ray_cluster, bert_dir, tmp_path, monkeypatch):
    if kind == "tiny HF model":
        tasks = TASKS
        model = ["--model", str(bert_dir), "--name", "test/tiny-bert", "--input", "description",
                 "--description-source", "hgnc", "--dtype", "float32"]
    else:
        tasks = TASKS + FAMILY + [SHARED]
        config = tmp_path / "random.yaml"
        config.write_text("model: random\ninput: random\nadapter: {dim: 16}\n")
        table = tmp_path / "table.parquet"
        assert main(["encode", "--config", str(config), "--tasks", *tasks, "--out", str(table)]) == 0
        model = ["--model", str(table), "--name", "test/random-16", "--input", "precomputed"]
    local = _run("local", tasks, tmp_path / "local", tmp_path / "cache-local", monkeypatch, *model)
    ray = _run("ray", tasks, tmp_path / "ray", tmp_path / "cache-ray", monkeypatch, *model)
    assert sorted(local) == sorted(ray) == sorted((scheme, name) for scheme in ("paper", "family") for name in tasks)
    for key, result in local.items():
        assert ray[key]["scores"] == result["scores"], key  # every fold of every metric, to the last bit
        assert ray[key]["coverage"] == result["coverage"]
        assert ray[key]["added_over_names"] == result["added_over_names"], key
    assert local["paper", "HLA class I vs class II"]["coverage"]["n_covered"] == 44
    if kind == "tiny HF model":
        ours, theirs = _cache_file(tmp_path / "cache-local"), _cache_file(tmp_path / "cache-ray")
        assert theirs.symbols.tolist() == sorted(theirs.symbols) == ours.symbols.tolist()
        np.testing.assert_array_equal(theirs.vectors, ours.vectors)
    else:
        assert "reused the fit" in ray["paper", FAMILY[1]]["diagnostics"]["solver"]  # with its parent, on one worker
        # a train-test task keeps its split under family folds: probed once on the cluster, filed under both
        assert ray["family", SHARED]["timing"] == ray["paper", SHARED]["timing"]


class KilledOnce:
    """A real adapter whose worker process is killed (SIGKILL) the first time it is asked to encode `victim`."""

    def __init__(self, adapter, victim: str, marker: Path) -> None:
        self.adapter, self.victim, self.marker = adapter, victim, marker

    @property
    def meta(self):
        return self.adapter.meta

    def encoding_order(self, symbols):
        return self.adapter.encoding_order(symbols)

    def encode(self, symbols):
        if self.victim in symbols and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return self.adapter.encode(symbols)


class FailsOn(KilledOnce):
    """A real adapter that raises on `victim`, as a model would on an input it cannot take."""

    def encode(self, symbols):
        if self.victim in symbols:
            raise ValueError(f"cannot encode {self.victim}")
        return self.adapter.encode(symbols)


@pytest.fixture()
def description_adapter(bert_dir):
    from model_adapters.description import DescriptionAdapter

    data = BenchmarkData(SNAPSHOT_DIR)
    genes = sorted({str(g) for name in TASKS for g in data.load_task(name).genes()})
    return DescriptionAdapter(str(bert_dir), hgnc=data.hgnc(), source="hgnc", dtype="float32"), genes


def test_a_worker_killed_mid_encode_is_replaced_and_the_vectors_are_the_same(ray_cluster, description_adapter,
                                                                             tmp_path):
    import ray.cloudpickle

    from genebench.distributed import RayEngine
    from model_adapters.cache import CachedEncoder

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this test module
    adapter, genes = description_adapter
    marker = tmp_path / "killed"
    with RayEngine() as engine:
        cached = CachedEncoder(KilledOnce(adapter, genes[len(genes) // 2], marker), cache_dir=tmp_path / "ray",
                               chunk_size=64, engine=engine)
        on_ray = cached.encode(genes)
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker process was killed
    here = CachedEncoder(adapter, cache_dir=tmp_path / "local", chunk_size=64).encode(genes)  # the same chunks
    assert on_ray.symbols.tolist() == here.symbols.tolist() == genes
    np.testing.assert_array_equal(on_ray.vectors, here.vectors)
    stored = cached.load()
    assert stored.symbols.tolist() == genes  # every gene once (nothing encoded twice into the file), sorted


def test_a_failing_model_names_the_node_and_model_and_keeps_what_finished(ray_cluster, description_adapter,
                                                                          tmp_path):
    import ray.cloudpickle

    from genebench.distributed import RayEngine
    from model_adapters.cache import CachedEncoder

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    adapter, genes = description_adapter
    with RayEngine() as engine:
        cached = CachedEncoder(FailsOn(adapter, genes[-1], tmp_path), cache_dir=tmp_path, chunk_size=16,
                               engine=engine)
        with pytest.raises(DistributedError, match=rf"with {bert_dir_name(adapter)} failed on node [\d.]+: "
                                                   rf"ValueError: cannot encode {genes[-1]}"):
            cached.encode(genes)
    kept = cached.load()
    assert kept is not None and 0 < len(kept.symbols) < len(genes)  # the finished blocks are in the cache
    assert genes[-1] not in kept.symbols.tolist()


def bert_dir_name(adapter) -> str:
    import re

    return re.escape(adapter.meta.id)


def test_ctrl_c_on_ray_keeps_finished_tasks_and_a_rerun_resumes(tmp_path):
    """SIGINT to the driver of a Ray run: it stops Ray and exits as a local run does; the rerun completes."""
    from interrupting import interrupt_then_resume

    pytest.importorskip("ray")
    interrupt_then_resume(["--input", "random", "--dim", "512", "--family", "perturbqa", "--engine", "ray"],
                          tmp_path / "results", tmp_path / "cache", 10)
