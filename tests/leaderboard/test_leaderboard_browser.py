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


def overall(runs, model_id: str, category: str | None = None, scheme: str = "paper") -> str:
    """A model's mean ± std AUC over its tasks (each task here is its own vote) as the page prints it."""
    run = next(r for r in runs if r.model.id == model_id and r.scheme == scheme)
    means = [r.scores["roc_auc"].mean for r in run.results if category in (None, r.task.category)]
    return f"{np.mean(means):.3f} \u00b1 {np.std(means):.3f}"


def signed(value: float) -> str:
    return f"{value:+.3f}"


def css(text: str) -> str:
    """`text` quoted for a CSS attribute selector."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def test_page_sorts_filters_links_and_escapes(site, browser, tmp_path: Path) -> None:
    index, runs = site
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(index.as_uri())
    page.wait_for_selector("#summary-table tbody tr")

    # Default: the complete runs, sorted and ranked by Understanding (the order the table opens in), ESM (no
    # family folds) unranked; the partial one apart, unranked.
    assert page.get_attribute('#summary-table th[data-col="understanding"]', "aria-sort") == "descending"
    assert column(page, "#summary-table", "rank") == ["1", "2", "\u2013"]
    assert column(page, "#summary-table", "tasks") == ["10 of 10"] * 3
    assert column(page, "#summary-table", "familyTasks") == ["10 (9 in Understanding)"] * 2 + ["\u2013"]
    assert column(page, "#summary-table", "coverage") == ["100.0%"] * 3
    assert [m.split(" @")[0] for m in column(page, "#unranked-table", "model")] == [PARTIAL]
    assert column(page, "#unranked-table", "tasks") == ["2 of 10"]
    assert column(page, "#unranked-table", "note") == ["partial: 2 of 10 tasks, not ranked"]
    assert page.locator("#unranked-table td[data-col='rank']").count() == 0
    assert page.locator("#family-section").is_hidden()  # no family-only run here
    assert all(cell.endswith(" (1 task)") for cell in column(page, "#summary-table", "cat:protein properties"))
    assert column(page, "#summary-table", "model")[0].startswith("sentence-transformers/all-MiniLM-L6-v2")
    minilm = MINILM
    assert column(page, "#summary-table", "overall")[0] == overall(runs, minilm)
    headers = page.locator("#summary-table thead th").all_inner_texts()
    assert headers[2:10] == ["AUC (paper folds)", "Lift (paper folds)", "Tasks (paper folds)", "AUC (family folds)",
                             "Lift (family folds)", "Understanding (family folds)", "Tasks (family folds)", "Coverage"]
    assert headers[10:15] == [f"{c} (paper folds)" for c in (
        "genomic properties",
        "regulatory functions",
        "localization",
        "biological processes",
        "protein properties",
    )]
    assert "by Understanding (family folds)" in page.get_attribute('#summary-table th[data-col="rank"]', "title")
    assert page.inner_text("#understanding-out") == (
        "Understanding leaves out 1 task: HLA class I vs class II (name control 0.950 \u2265 0.9 under family folds).")

    # Family folds beside the paper folds: Understanding (added over names over the tasks no control solves under
    # family folds, here all but HLA), with its bootstrap interval; ESM has no family-fold run.
    family_run = next(r for r in runs if r.model.id == minilm and r.scheme == "family")
    added = [r.added_over_names.value for r in family_run.results if r.task.controls["name"] < 0.9]
    assert len(added) == len(family_run.results) - 1
    view = leaderboard_data(runs)["views"]["||"][f"{minilm.replace('/', '__')}/main"]["understanding"]
    low, high = (float(v) for v in view[0].split("[")[1].rstrip("]").split(", "))
    assert low < np.mean(added) < high
    cells = dict(zip(column(page, "#summary-table", "model"), column(page, "#summary-table", "understanding")))
    assert cells[f"{minilm} @main"] == view[0] and view[0].startswith(signed(np.mean(added)) + " [")
    assert cells["facebook/esm2_t33_650M_UR50D @main"] == "\u2013"
    assert column(page, "#summary-table", "family")[0] == overall(runs, minilm, scheme="family")
    lifts = [r.lift for r in family_run.results]
    assert column(page, "#summary-table", "familyLift")[0] == signed(np.mean(lifts))
    assert column(page, "#summary-table", "family")[2] == "\u2013"
    page.click('#summary-table th[data-col="familyLift"]')
    family_lifts = column(page, "#summary-table", "familyLift")
    assert family_lifts[2] == "\u2013" and float(family_lifts[0]) > float(family_lifts[1])
    page.click("#filter-reset")

    # Every per-task added-over-names cell reads back as its result file stores it: value and 95% interval.
    shown = 0
    for run in (r for r in runs if r.scheme == "family"):
        for result in run.results:
            locator = page.locator(f'tr[data-task="{css(result.task.name)}"] '
                                   f'td[data-col="model:{run.key}"] span[data-part="added"]')
            stored = result.added_over_names
            assert locator.inner_text() == (f"{signed(stored.value)} [{signed(stored.low)}, {signed(stored.high)}]"
                                            if stored and stored.value is not None else "\u2013")
            low, high = (float(v) for v in locator.inner_text().split("[")[1].rstrip("]").split(", "))
            assert low <= high
            shown += 1
    assert shown == 2 * (len(TASKS) + 1)

    # Sort by model name (ascending), then by paper-fold AUC (descending first, then ascending): Rank stays.
    page.click('#summary-table th[data-col="model"]')
    assert [m.split(" @")[0] for m in column(page, "#summary-table", "model")] == sorted(MODELS, key=str.lower)
    page.click('#summary-table th[data-col="overall"]')
    assert column(page, "#summary-table", "rank") == ["1", "2", "\u2013"]
    page.click('#summary-table th[data-col="overall"]')
    assert column(page, "#summary-table", "rank") == ["\u2013", "2", "1"]
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
    assert page.locator("#summary-table thead th").all_inner_texts()[10:11] == ["regulatory functions (paper folds)"]
    # a filtered view shows understanding over its own tasks, with its own interval
    cells = dict(zip(column(page, "#summary-table", "model"), column(page, "#summary-table", "understanding")))
    text = leaderboard_data(runs)["views"]["regulatory functions||"][f"{minilm.replace('/', '__')}/main"]
    assert cells[f"{minilm} @main"] == text["understanding"][0]
    assert text["understanding"][1] == pytest.approx(np.mean([
        r.added_over_names.value for r in family_run.results if r.task.category == "regulatory functions"]))
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
    scores = [float(s.split(" ")[1]) for s in column(page, table, "model:ctheodoris__Geneformer/main")]
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
    assert page.locator("#figures figcaption").all_inner_texts() == [
        f"Mean ROC AUC over tasks ({scheme} folds), models \u00d7 categories" for scheme in ("paper", "family")]
    assert page.evaluate("[...document.querySelectorAll('#figures img')].map(i => i.naturalWidth)") > [100, 100]
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


def test_a_paper_only_and_a_family_only_run_are_never_ranked_together(browser, tmp_path: Path) -> None:
    """A model scored under paper folds only and one under family folds only: each in its own table, ranked
    (Rank 1) against its own scheme's runs alone, the family-only run's AUC never in a paper-fold column."""
    root = tmp_path / "results"
    write_model(root, MINILM, level=0.80, tasks=TASKS)
    write_model(root, "ctheodoris/Geneformer", adapter="token", level=0.95, tasks=TASKS, scheme="family")
    runs = validate_results(root)
    index = build_site(runs, tmp_path / "site")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(index.as_uri())
    page.wait_for_selector("#summary-table tbody tr")
    assert [m.split(" @")[0] for m in column(page, "#summary-table", "model")] == [MINILM]
    assert column(page, "#summary-table", "rank") == ["1"]
    assert column(page, "#summary-table", "overall") == [overall(runs, MINILM)]
    assert page.get_attribute('#summary-table th[data-col="overall"]', "aria-sort") == "descending"
    assert page.locator("#family-section").is_visible()
    assert [m.split(" @")[0] for m in column(page, "#family-table", "model")] == ["ctheodoris/Geneformer"]
    assert column(page, "#family-table", "rank") == ["1"]
    assert column(page, "#family-table", "overall") == [overall(runs, "ctheodoris/Geneformer", scheme="family")]
    headers = page.locator("#family-table thead th").all_inner_texts()
    assert headers[2:6] == ["AUC (family folds)", "Lift (family folds)", "Understanding (family folds)",
                            "Tasks (family folds)"]
    assert not any("paper" in header for header in headers)
    assert page.get_attribute('#family-table th[data-col="understanding"]', "aria-sort") == "descending"
    page.close()
