"""The paper's published models on the leaderboard: a labelled group of their own, hideable, never ranked with runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from leaderboard_helpers import MODELS, TASKS, write_model

from genebench import published
from genebench.leaderboard import build_site, leaderboard_data, validate_results
from genebench.published.leaderboard import NOTE
from genebench.results import score_cell

CHROMIUM = Path("/usr/bin/chromium")
PARTIAL = "tiny-org/two-task-model"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list:
    root = tmp_path_factory.mktemp("results")
    for model_id, (adapter, n_parameters, level) in MODELS.items():
        write_model(root, model_id, adapter=adapter, n_parameters=n_parameters, level=level)
    write_model(root, PARTIAL, level=0.97, tasks=TASKS[:2])  # partial: unranked
    return validate_results(root)


def paper(model: str) -> dict:
    """The paper's mean and fold sd of `model` on the tasks of the test page it has, by genebench task name."""
    scores = published.fold_scores()
    mine = scores[(scores["model"] == model) & scores["task"].isin({t[0] for t in TASKS})]
    return {row.task: (row.mean, row.sd) for row in mine.itertuples()}


def test_published_models_are_data_apart_from_the_runs(runs):
    data = leaderboard_data(runs)
    entries = data["published"]["models"]
    assert data["published"]["label"] == published.GROUP
    assert [e["id"] for e in entries] == [f"{m} (as published)" for m in sorted(published.models()["model"])]
    assert not any(e["ranked"] for e in entries) and {e["note"] for e in entries} == {NOTE}
    assert not {e["key"] for e in entries} & {m["key"] for m in data["models"]}  # never among the ranked runs
    assert [m["ranked"] for m in data["models"]].count(True) == 3
    mpnet = paper("MPNet")
    assert set(mpnet) == {"TF vs non-TF", "HLA class I vs class II", "Subcellular location", "Secretome location",
                          "Pathways", "Gene2Gene"}
    key = published.model_id("MPNet")
    mean, sd = mpnet["TF vs non-TF"]
    assert data["cells"][key]["TF vs non-TF"] == {"own": [f"{mean:.3f} \u00b1 {sd:.3f} =", mean]}
    mean, sd = mpnet["Secretome location"]  # the runs' data names no HPA v23 release: another release
    assert data["cells"][key]["Secretome location"]["own"][0] == f"{mean:.3f} \u00b1 {sd:.3f} R"
    assert data["cells"][key]["Pathways"]["own"][0].endswith(" P")  # multi-label AUC from probabilities here
    means = [m for m, _ in mpnet.values()]
    assert data["views"]["||"][key]["overall"] == [score_cell(np.mean(means), np.std(means), len(means)),
                                                   pytest.approx(np.mean(means))]
    assert data["views"]["||"][key]["tasks"][0] == f"6 of {len(TASKS)}"
    assert leaderboard_data(runs, published=False)["published"] is None


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium absent: apt-get install -y chromium")
def test_the_page_shows_the_nine_published_models_unranked_and_hideable(runs, tmp_path: Path) -> None:
    from test_leaderboard_browser import ARGS, column

    sync_api = pytest.importorskip("playwright.sync_api")
    index = build_site(runs, tmp_path / "site")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(index.as_uri())
        page.wait_for_selector("#published-table tbody tr")

        # Their own labelled group: all 9, no Rank column, each saying why; the runs' ranking is untouched.
        assert page.inner_text("#published-label") == published.GROUP
        names = column(page, "#published-table", "model")
        assert len(names) == 9 and all(" (as published) @" in name for name in names)
        assert page.locator("#published-table td[data-col='rank'], #published-table th[data-col='rank']").count() == 0
        assert column(page, "#published-table", "note") == [NOTE] * 9
        assert column(page, "#summary-table", "rank") == ["1", "2", "3"]
        assert not any("as published" in name for name in column(page, "#summary-table", "model")
                       + column(page, "#unranked-table", "model"))
        assert page.inner_text("#filter-status") == f"4 of 4 models, {len(TASKS)} of {len(TASKS)} tasks"

        # Sorted like runs: it opens by their AUC over this page's tasks, highest first; a click turns it.
        assert page.get_attribute('#published-table th[data-col="overall"]', "aria-sort") == "descending"
        values = [float(v.split(" ")[0]) for v in column(page, "#published-table", "overall")]
        assert values == sorted(values, reverse=True)
        page.click('#published-table th[data-col="overall"]')
        assert [float(v.split(" ")[0]) for v in column(page, "#published-table", "overall")] == sorted(values)

        # The per-task view: a run beside each published model's mean and fold sd, with the relation mark.
        mean, sd = paper("Gene2vec")["TF vs non-TF"]
        cell = page.locator(f'tr[data-task="TF vs non-TF"] td[data-col="model:{published.model_id("Gene2vec")}"]')
        assert cell.inner_text() == f"published {mean:.3f} \u00b1 {sd:.3f} ="
        assert page.locator('tr[data-task="TF vs non-TF"] td[data-col^="model:"]').count() == 4 + 9

        # Filtered like runs: by input kind.
        page.select_option("#filter-modality", "description")
        assert sorted(n.split(" (")[0] for n in column(page, "#published-table", "model")) == [
            "MPNet", "MTEB-1B", "MTEB-7B"]
        page.click("#filter-reset")

        # Hidden on request: the group and its task columns go, the runs stay as they were.
        page.uncheck("#filter-published")
        assert page.locator("#published-section").is_hidden()
        assert page.locator('tr[data-task="TF vs non-TF"] td[data-col^="model:"]').count() == 4
        assert column(page, "#summary-table", "rank") == ["1", "2", "3"]
        page.click("#filter-reset")
        assert page.locator("#published-section").is_visible()
        assert errors == []
        browser.close()


pytestmark = pytest.mark.slow  # real-data builds, refits, the published field: seconds each; CI runs them
