"""`genebench leaderboard build` and `genebench submit`, run through their argparse handlers on real folders."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest
from fake_hub import FakeHub
from leaderboard_helpers import write_model

from genebench.build import build_data
from genebench.cli import leaderboard as cli
from genebench.errors import SubmissionError

REPO = "genebench/genebench-results"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="genebench")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real genebench data folder (the humantfs family) built from the test fixtures."""
    fixtures = Path(__file__).parents[1] / "fixtures"
    out = tmp_path_factory.mktemp("data")
    build_data(
        out, ["humantfs"], sources_dir=fixtures, hgnc=fixtures / "hgnc" / "hgnc_complete_set.txt", progress=False
    )
    return out


@pytest.fixture
def data_results(data_dir: Path, tmp_path: Path) -> Path:
    """Results for every task of `data_dir`, naming its revision."""
    from genebench.data import BenchmarkData

    data = BenchmarkData(data_dir)
    tasks = tuple((t.name, t.category, t.type, t.family, t.n_entities) for t in data.tasks())
    folder = write_model(tmp_path / "results", MINILM, tasks=tasks, provenance=data.provenance)
    for path in folder.glob("*.json"):  # each result records the data's controls and its lift over them, as a run does
        document = json.loads(path.read_text())
        if "scores" in document:
            controls = data.metadata(document["task"]["name"]).controls
            document["task"]["controls"] = controls
            document["lift"] = document["scores"]["roc_auc"]["mean"] - max(controls.values())
            path.write_text(json.dumps(document))
    return tmp_path / "results"


def test_help_teaches_with_examples() -> None:
    parser = argparse.ArgumentParser(prog="genebench")
    subparsers = parser.add_subparsers(dest="command")
    cli.register(subparsers)
    assert "genebench submit results/ --repo genebench/genebench-results" in subparsers.choices["submit"].format_help()
    assert "genebench leaderboard build --from-hub" in subparsers.choices["leaderboard"].format_help()


def test_build_writes_a_site(make_results, tmp_path: Path) -> None:
    assert run("leaderboard", "build", str(make_results()), "--out", str(tmp_path / "site")) == 0
    html = (tmp_path / "site" / "index.html").read_text()
    assert "ctheodoris/Geneformer" in html and (tmp_path / "site" / "figures" / "heatmap_categories.png").is_file()


def test_build_needs_an_input(tmp_path: Path) -> None:
    with pytest.raises(SubmissionError, match="expected RESULTS_DIR... or --from-hub REPO, found neither"):
        run("leaderboard", "build", "--out", str(tmp_path / "site"))


def test_submit_then_build_from_hub(data_results: Path, data_dir: Path, fake_hub: FakeHub, tmp_path: Path) -> None:
    assert run("submit", str(data_results), "--repo", REPO, "--data", str(data_dir), "--endpoint", fake_hub.url) == 0
    assert (
        "results/sentence-transformers__all-MiniLM-L6-v2/main/TF_vs_non-TF.json"
        in fake_hub.repos[REPO].refs["refs/pr/1"]
    )
    fake_hub.merge(REPO, 1)
    site = tmp_path / "site"
    argv = ["leaderboard", "build", "--from-hub", REPO, "--out", str(site), "--endpoint", fake_hub.url]
    assert run(*argv, "--data", str(data_dir)) == 0
    assert f'"id": "{MINILM}"' in (site / "index.html").read_text()
    assert (site / "models" / "sentence-transformers__all-MiniLM-L6-v2" / "main" / "results.json").is_file()


def test_submit_rejects_results_of_other_data(make_results, data_dir: Path, fake_hub: FakeHub) -> None:
    argv = ["submit", str(make_results()), "--repo", REPO, "--data", str(data_dir), "--endpoint", fake_hub.url]
    with pytest.raises(SubmissionError, match="expected dataset revision data_hash '[0-9a-f]+', found '3f1c9a0d2b7e'"):
        run(*argv)
    assert fake_hub.repos[REPO].pull_requests == []


def test_submit_without_data_explains_the_flag(make_results, fake_hub: FakeHub) -> None:
    argv = ["submit", str(make_results()), "--repo", REPO, "--data", "/no/such/data", "--endpoint", fake_hub.url]
    with pytest.raises(SubmissionError, match="pass --data PATH_OR_HUB_ID .* or --allow-unverified-task-set"):
        run(*argv)


def test_dry_run_uploads_nothing(make_results, fake_hub: FakeHub) -> None:
    argv = ["submit", str(make_results()), "--repo", REPO, "--allow-unverified-task-set", "--dry-run"]
    assert run(*argv, "--endpoint", fake_hub.url) == 0
    assert fake_hub.requests == []


@pytest.mark.skipif(
    not all(importlib.util.find_spec(f"genebench.cli.{m}") for m in ("tasks", "build", "run", "report")),
    reason="the other genebench subcommand modules are not written yet; main() imports them all",
)
def test_main_prints_one_line_and_exits_2(make_results, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from genebench.cli import main

    root = make_results(models=(MINILM,))
    (root / "sentence-transformers__all-MiniLM-L6-v2" / "main" / "model_meta.json").unlink()
    assert main(["submit", str(root), "--repo", REPO, "--allow-unverified-task-set", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("genebench submit: error: ") and "model_meta.json" in err and "\n" not in err
