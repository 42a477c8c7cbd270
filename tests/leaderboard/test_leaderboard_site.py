"""The static page's data and files, built from real validated result folders."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from leaderboard_helpers import TASKS, task_file_name, write_model

from genebench.leaderboard import build_site, find_figures, leaderboard_data, validate_results
from genebench.leaderboard.site import embed_json, size_bucket


def test_embed_json_leaves_no_markup_characters() -> None:
    text = embed_json({"name": "</script><b>&amp;\u2028"})
    assert not set("<>&") & set(text)
    assert json.loads(text) == {"name": "</script><b>&amp;\u2028"}


@pytest.mark.parametrize(
    ("n", "bucket"), [(None, "unknown"), (0, "small"), (99_999_999, "small"), (10**8, "medium"), (10**9, "large")]
)
def test_size_buckets(n: int | None, bucket: str) -> None:
    assert size_bucket(n)[0] == bucket


def test_leaderboard_data_holds_main_scores(make_results) -> None:
    runs = validate_results(make_results())
    data = leaderboard_data(runs)
    assert data["categories"] == [
        "genomic properties",
        "regulatory functions",
        "localization",
        "biological processes",
        "protein properties",
    ]
    assert data["modalities"] == ["description", "protein", "token"]
    assert [s["key"] for s in data["sizes"]] == ["small", "medium"]
    assert len(data["tasks"]) == len(TASKS) and data["tasks"][0]["category"] == "genomic properties"
    esm = next(m for m in data["models"] if m["id"] == "facebook/esm2_t33_650M_UR50D")
    assert (esm["size"], esm["n_parameters"], esm["input"]) == ("medium", 650_000_000, "protein")
    assert esm["meta_href"] == "models/facebook__esm2_t33_650M_UR50D/main/model_meta.json"
    result = next(r for r in runs[1].results if r.task.name == "Pathways")
    score = result.scores["roc_auc"]
    assert data["cells"][runs[1].key]["Pathways"] == {"own": [f"{score.mean:.3f} \u00b1 {score.std:.3f} (\u2013)",
                                                              score.mean]}


def test_skipped_task_has_no_score(make_results) -> None:
    root = make_results(models=("ctheodoris/Geneformer",))
    path = root / "ctheodoris__Geneformer" / "main" / task_file_name("HLA class I vs class II")
    document = json.loads(path.read_text())
    document.update(scores={}, skipped="too few covered genes: 12 < 20")
    path.write_text(json.dumps(document))
    runs = validate_results(root)
    assert leaderboard_data(runs)["cells"]["ctheodoris__Geneformer/main"]["HLA class I vs class II"] == {
        "own": ["\u2013", None]}


def test_build_site_writes_page_assets_figures_and_model_files(make_results, tmp_path: Path, caplog) -> None:
    from PIL import Image

    root = make_results()
    (root / "report").mkdir()
    Image.new("RGB", (4, 3), "red").save(root / "report" / "auc_by_task_type.png")
    (root / "report" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    (root / "report" / "not_really.png").write_text("<script>alert(1)</script>")
    (root / "report" / "categories.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    figures = find_figures([root])
    assert [f.name for f in figures] == ["auc_by_task_type.png", "broken.png", "categories.svg"]
    runs = validate_results(root)
    index = build_site(runs, tmp_path / "site", figures=figures)
    assert "Dropped figure" in caplog.text and "broken.png: not a decodable PNG" in caplog.text
    site = index.parent
    html = index.read_text()
    block = re.search(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', html, re.S).group(1)
    assert "<" not in block
    data = json.loads(block)
    assert data["models"] == leaderboard_data(runs)["models"]
    assert [f["src"] for f in data["figures"]] == [
        "figures/heatmap_categories.png",
        "figures/00_auc_by_task_type.png",
        "figures/02_categories.svg",
    ]
    assert (site / "figures" / "heatmap_categories.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (site / "assets" / "leaderboard.js").is_file() and (site / "assets" / "leaderboard.css").is_file()
    assert (
        "sdk: static" in (site / "README.md").read_text() and "app_file: index.html" in (site / "README.md").read_text()
    )
    results = json.loads((site / "models" / "ctheodoris__Geneformer" / "main" / "results.json").read_text())
    assert len(results) == len(TASKS) and all(
        np.isclose(r["scores"]["roc_auc"]["mean"], np.mean(r["scores"]["roc_auc"]["folds"])) for r in results
    )
    meta = json.loads((site / "models" / "ctheodoris__Geneformer" / "main" / "model_meta.json").read_text())
    assert meta["id"] == "ctheodoris/Geneformer"
    assert not list(site.rglob("*.tmp")), "atomic writes leave no temporary files"


def test_family_folds_sit_beside_the_paper_folds_with_understanding(make_results, tmp_path: Path) -> None:
    paper = validate_results(make_results(models=("ctheodoris/Geneformer",)))
    family_root = tmp_path / "family"
    write_model(family_root, "ctheodoris/Geneformer", adapter="token", level=0.77, scheme="family")
    family = validate_results(family_root)
    data = leaderboard_data([*paper, *family])
    (model,) = data["models"]
    assert model["scheme"] == "paper" and model["family_results_href"].endswith("results-family.json")
    pathways = next(r for r in family[0].results if r.task.name == "Pathways")
    added = pathways.added_over_names
    assert data["cells"][model["key"]]["Pathways"]["family"] == [
        f"{pathways.scores['roc_auc'].mean:.3f} \u00b1 {pathways.scores['roc_auc'].std:.3f} ({pathways.lift:+.3f})",
        pathways.scores["roc_auc"].mean]
    assert data["cells"][model["key"]]["Pathways"]["added"] == [
        f"{added.value:+.3f} [{added.low:+.3f}, {added.high:+.3f}]", added.value]
    # understanding leaves out HLA (its name control reaches 0.95), and says why; every vote here holds one task
    assert data["understanding_out"] == [
        ["HLA class I vs class II", "name control 0.950 \u2265 0.9 under family folds"]]
    views = {key: view[model["key"]]["understanding"] for key, view in data["views"].items()}
    kept = [r.added_over_names.value for r in family[0].results if r.task.name != "HLA class I vs class II"]
    low, high = (float(v) for v in views["||"][0].split("[")[1].rstrip("]").split(", "))
    assert views["||"][1] == pytest.approx(np.mean(kept)) and low < np.mean(kept) < high
    # each filter view has its own interval: one category's tasks only, and none left where no task stays
    regulatory = [r.added_over_names.value for r in family[0].results if r.task.category == "regulatory functions"]
    view = views["regulatory functions||"]
    view_low, view_high = (float(v) for v in view[0].split("[")[1].rstrip("]").split(", "))
    assert view[1] == pytest.approx(np.mean(regulatory)) and view_low < view[1] < view_high
    assert view_high - view_low > high - low  # fewer tasks, a wider interval
    assert views["genomic properties|binary|"][1] == pytest.approx(
        next(r.added_over_names.value for r in family[0].results if r.task.name.startswith("Dosage")))
    assert views["protein properties|derived binary|"][0] != "\u2013"
    assert views["protein properties|categorical|"] == ["\u2013", None]
    hla = next(t for t in data["tasks"] if t["name"] == "HLA class I vs class II")
    assert hla["shortcut"] and hla["best_control"] == "name 0.950 (family folds)"
    index = build_site([*paper, *family], tmp_path / "site")
    folder = index.parent / "models" / "ctheodoris__Geneformer" / "main"
    assert json.loads((folder / "results-family.json").read_text())[0]["probe"]["scheme"] == "family"
    assert json.loads((folder / "results.json").read_text())[0]["probe"].get("scheme", "paper") == "paper"
