"""`genebench sweep --engine ray`: three models on a real local Ray instance, resumed, same scores as local."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genebench.cli import main
from genebench.sweep import DONE_FILE

pytestmark = pytest.mark.slow

SWEEP = """\
models:
  - {input: random, name: test/random-a, adapter: {dim: 16, seed: 0}}
  - {input: random, name: test/random-b, adapter: {dim: 16, seed: 1}}
  - {input: random, name: test/random-c, adapter: {dim: 32, seed: 2}}
tasks: {tasks: ["HLA class I vs class II", "long vs short range TF", "N1 network"]}
"""


def _scores(out: Path) -> dict[tuple[str, str], dict]:
    files = [p for p in out.rglob("*.json") if p.name != "model_meta.json" and "report" not in p.parts]
    return {(r["model"]["id"], r["task"]["name"]): r["scores"] for r in (json.loads(p.read_text()) for p in files)}


def test_a_ray_sweep_of_three_models_resumes_and_matches_a_local_one(ray_cluster, tmp_path, capsys):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SWEEP)
    on_ray, here = tmp_path / "ray", tmp_path / "local"
    assert main(["sweep", str(sweep), "--out", str(on_ray), "--engine", "ray"]) == 0
    assert "3 models scored, 0 finished before" in capsys.readouterr().out
    assert main(["sweep", str(sweep), "--out", str(here)]) == 0
    assert _scores(on_ray) == _scores(here) and len(_scores(here)) == 9  # bit for bit, every fold

    (folder,) = [p for p in on_ray.iterdir() if p.name.startswith("test__random-c")]
    (folder / DONE_FILE).unlink()  # model c was interrupted: its results are gone but one
    for path in [p for p in folder.rglob("*.json") if p.name != "model_meta.json"][1:]:
        path.unlink()
    assert main(["sweep", str(sweep), "--out", str(on_ray), "--engine", "ray"]) == 0
    printed = capsys.readouterr().out
    assert "1 models scored, 2 finished before" in printed and "| test/random-c |" in printed
    assert _scores(on_ray) == _scores(here)
    assert (on_ray / "report" / "report.html").exists()
