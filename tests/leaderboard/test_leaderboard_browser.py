"""End to end in Debian's chromium, driven by Playwright: load the built page from file://, sort, filter, check."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from leaderboard_helpers import MODELS, TASKS, write_model

from genebench.leaderboard import build_site, find_figures, leaderboard_data, validate_results

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PARTIAL = "tiny-org/two-task-model"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
FAMILY_LEVELS = {MINILM: 0.79, "ctheodoris/Geneformer": 0.77}
HOSTILE_TASK = ('Sneaky </script><img src=x onerror="window.__pwned=1"> task', "localization", "binary", "hpa", 40)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="Debian chromium absent: apt-get update && apt-get install -y chromium"
    ),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    root = tmp_path_factory.mktemp("results")
    for model_id, (adapter, n_parameters, level) in MODELS.items():
        write_model(root, model_id, adapter=adapter, n_parameters=n_parameters, level=level,
                    tasks=(*TASKS, HOSTILE_TASK))
    write_model(root, PARTIAL, level=0.97, tasks=TASKS[:2])  # the best mean, on 2 tasks: shown apart, never ranked
    for model_id, level in FAMILY_LEVELS.items():  # family folds beside the paper folds of two models; none for ESM
        adapter, n_parameters, _ = MODELS[model_id]
        write_model(root, model_id, adapter=adapter, n_parameters=n_parameters, level=level,
                    tasks=(*TASKS, HOSTILE_TASK), scheme="family")
    runs = validate_results(root)
    index = build_site(runs, tmp_path_factory.mktemp("site"), figures=find_figures([root]))
    return index, runs


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


def column(page, table: str, col: str) -> list[str]:
    return page.locator(f'{table} tbody td[data-col="{col}"]').all_inner_texts()


def overall(runs, model_id: str, category: str | None = None, folds: str = "paper") -> str:
    """A model's mean ± std AUC over its tasks (each task here is its own vote) as the page prints it."""
    run = next(r for r in runs if r.model.id == model_id and r.folds == folds)
    means = [r.scores["roc_auc"].mean for r in run.results if category in (None, r.task.category)]
    return f"{np.mean(means):.3f} \u00b1 {np.std(means):.3f}"


def signed(value: float) -> str:
    return f"{value:+.3f}"


def test_page_sorts_filters_links_and_escapes(site, browser, tmp_path: Path) -> None:
    index, runs = site
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(index.as_uri())
    page.wait_for_selector("#summary-table tbody tr")

    # Default: the complete runs ranked by overall mean AUC over all tasks; the partial one apart, unranked.
    assert column(page, "#summary-table", "rank") == ["1", "2", "3"]
    assert column(page, "#summary-table", "tasks") == ["10 of 10"] * 3
    assert column(page, "#summary-table", "coverage") == ["100.0%"] * 3
    assert [m.split(" @")[0] for m in column(page, "#unranked-table", "model")] == [PARTIAL]
    assert column(page, "#unranked-table", "tasks") == ["2 of 10"]
    assert column(page, "#unranked-table", "note") == ["partial: 2 of 10 tasks, not ranked"]
    assert page.locator("#unranked-table td[data-col='rank']").count() == 0
    assert all(cell.endswith(" (1 task)") for cell in column(page, "#summary-table", "cat:protein properties"))
    assert column(page, "#summary-table", "model")[0].startswith("sentence-transformers/all-MiniLM-L6-v2")
    minilm = MINILM
    assert column(page, "#summary-table", "overall")[0] == overall(runs, minilm)
    headers = page.locator("#summary-table thead th").all_inner_texts()
    assert headers[2:9] == ["Overall", "Lift", "Family AUC", "Family lift", "Understanding", "Tasks", "Coverage"]
    assert headers[9:14] == [
        "genomic properties",
        "regulatory functions",
        "localization",
        "biological processes",
        "protein properties",
    ]

    # Family folds beside the paper folds: ranked by understanding (added over names over the tasks whose family-fold
    # name control stays below 0.9, here all but HLA), with its bootstrap interval; ESM has no family-fold run.
    assert page.get_attribute('#summary-table th[data-col="understanding"]', "aria-sort") == "descending"
    family_run = next(r for r in runs if r.model.id == minilm and r.folds == "family")
    added = [r.added_over_names.value for r in family_run.results if r.task.controls["name"] < 0.9]
    assert len(added) == len(family_run.results) - 1
    views = leaderboard_data(runs)["family"][f"{minilm.replace('/', '__')}/main"]["understanding"]
    low, high = views["||"][1:]
    assert low < np.mean(added) < high
    cells = dict(zip(column(page, "#summary-table", "model"), column(page, "#summary-table", "understanding")))
    assert cells[f"{minilm} @main"] == f"{signed(np.mean(added))} [{signed(low)}, {signed(high)}]"
    assert cells["facebook/esm2_t33_650M_UR50D @main"] == "\u2013"
    assert column(page, "#summary-table", "family")[0] == overall(runs, minilm, folds="family")
    lifts = [r.lift for r in family_run.results]
    assert column(page, "#summary-table", "familyLift")[0] == signed(np.mean(lifts))
    assert column(page, "#summary-table", "family")[2] == "\u2013"
    page.click('#summary-table th[data-col="familyLift"]')
    family_lifts = column(page, "#summary-table", "familyLift")
    assert family_lifts[2] == "\u2013" and float(family_lifts[0]) > float(family_lifts[1])
    page.click("#filter-reset")

    # Sort by model name (ascending), then by overall (descending first, then ascending).
    page.click('#summary-table th[data-col="model"]')
    assert [m.split(" @")[0] for m in column(page, "#summary-table", "model")] == sorted(MODELS, key=str.lower)
    page.click('#summary-table th[data-col="overall"]')
    assert column(page, "#summary-table", "rank") == ["1", "2", "3"]
    page.click('#summary-table th[data-col="overall"]')
    assert column(page, "#summary-table", "rank") == ["3", "2", "1"]
    assert page.get_attribute('#summary-table th[data-col="overall"]', "aria-sort") == "ascending"

    # Filter by input modality and by model size.
    page.select_option("#filter-modality", "protein")
    assert [m.split(" @")[0] for m in column(page, "#summary-table", "model")] == ["facebook/esm2_t33_650M_UR50D"]
    page.select_option("#filter-modality", "")
    page.select_option("#filter-size", "small")
    assert len(column(page, "#summary-table", "model")) == 2
    page.click("#filter-reset")

    # Filter by category: aggregates are recomputed over the selected tasks only.
    page.select_option("#filter-category", "regulatory functions")
    assert page.locator("#summary-table thead th").all_inner_texts()[2:10] == [
        "Overall", "Lift", "Family AUC", "Family lift", "Understanding", "Tasks", "Coverage", "regulatory functions"]
    # a filtered view shows understanding over its own tasks, with its own interval
    cells = dict(zip(column(page, "#summary-table", "model"), column(page, "#summary-table", "understanding")))
    mean, low, high = views["regulatory functions||"]
    assert cells[f"{minilm} @main"] == f"{signed(mean)} [{signed(low)}, {signed(high)}]"
    assert mean == pytest.approx(np.mean([r.added_over_names.value for r in family_run.results
                                          if r.task.category == "regulatory functions"]))
    rows = dict(zip(column(page, "#summary-table", "model"), column(page, "#summary-table", "overall")))
    assert rows[f"{minilm} @main"] == overall(runs, minilm, "regulatory functions")
    assert page.locator(".task-table").count() == 1
    assert page.locator(".task-table tbody tr").count() == 2
    assert column(page, "#summary-table", "tasks") == ["2 of 2"] * 3
    page.select_option("#filter-category", "")
    page.select_option("#filter-type", "categorical")
    assert page.inner_text("#filter-status") == "4 of 4 models, 2 of 10 tasks"
    page.click("#filter-reset")

    # Per-task tables sort by a model's score.
    table = '.task-table[data-category="biological processes"]'
    page.click(f'{table} th[data-col="model:ctheodoris__Geneformer/main"]')
    scores = [float(s.split(" ")[0]) for s in column(page, table, "model:ctheodoris__Geneformer/main")]
    assert scores == sorted(scores, reverse=True) and len(scores) == 2

    # Model rows link to metadata and results that exist beside the page.
    href = page.get_attribute('#summary-table tr[data-model="ctheodoris__Geneformer/main"] a.meta-link', "href")
    assert json.loads((index.parent / href).read_text())["id"] == "ctheodoris/Geneformer"
    href = page.get_attribute('#summary-table tr[data-model="ctheodoris__Geneformer/main"] a.results-link', "href")
    assert len(json.loads((index.parent / href).read_text())) == len(TASKS) + 1

    # Submission text is shown as text, never run as HTML.
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".task-table img").count() == 0
    assert HOSTILE_TASK[0] in page.locator('.task-table[data-category="localization"]').inner_text()
    assert page.locator("#figures img").count() == 1
    assert page.evaluate("document.querySelector('#figures img').naturalWidth") > 100, "heatmap PNG loads"
    assert errors == []

    # At 1280 px nothing is cut off: the summary table scrolls inside its box, the page does not.
    page.set_viewport_size({"width": 1280, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    box = page.locator('#summary-table th[data-col="overall"]').bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1280

    shot = Path(os.environ.get("GENEBENCH_SCREENSHOT_DIR", tmp_path)) / "leaderboard.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page.close()
