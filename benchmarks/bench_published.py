"""The paper's published scores beside a run: `compare --published` and the leaderboard page that shows them.

Targets (issue #33): `genebench compare RESULTS --published MPNet` runs offline in under 5 s (a fresh process, as a
user runs it); the leaderboard page with the 9 published models still loads in under 1 s from file://.

Baselines, measured in the same run: for `compare`, a fresh process that only reads the same results folder
(`load_results`), which compare cannot avoid; for the page, the same site built without the published models
(`leaderboard_data(..., published=False)`). Each figure is the best of `REPEATS`. The page figure is the
browser's load event (navigation start to loadEventEnd) in Debian's chromium through Playwright.

    python benchmarks/bench_published.py RESULTS    # e.g. results-minilm/
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_COMPARE = 5.0
TARGET_PAGE = 1.0
REPEATS = 3
CHROMIUM = Path("/usr/bin/chromium")


def process_seconds(argv: list[str]) -> float:
    """Best wall-clock time of a fresh process running `argv` (its output discarded), in seconds."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)


def page_seconds(index: Path) -> float:
    """Best load time of `index` from file:// in headless chromium (navigation start to loadEventEnd)."""
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        for _ in range(REPEATS):
            page = browser.new_page()
            page.goto(index.as_uri(), wait_until="load")
            times.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd") / 1000)
            page.close()
        browser.close()
    return min(times)


def main(results: Path) -> None:
    """Measure both figures against their baselines and print each with its ratio to the baseline and target."""
    from genebench.leaderboard import validate_results
    from genebench.leaderboard.site import build_site

    read = process_seconds([sys.executable, "-c", f"from genebench.results import load_results; "
                                                  f"load_results({str(results)!r})"])
    compared = process_seconds(["genebench", "compare", str(results), "--published", "MPNet"])
    print(f"compare --published MPNet on {results}:")
    print(f"  baseline, reading the results:  {read:6.3f} s")
    print(f"  compare --published MPNet:      {compared:6.3f} s  ({compared / read:.2f} x baseline, "
          f"{compared / TARGET_COMPARE:.2f} x the {TARGET_COMPARE:.0f} s target)")
    if not CHROMIUM.exists():
        print("page load: skipped, Debian chromium absent (apt-get install -y chromium)")
        return
    runs = validate_results(results)
    with tempfile.TemporaryDirectory() as folder:
        without = build_site(runs, Path(folder) / "without", published=False)
        shown_page = build_site(runs, Path(folder) / "with")
        base, shown = page_seconds(without), page_seconds(shown_page)
    print(f"leaderboard page from file:// ({len(runs)} runs):")
    print(f"  baseline, without published:    {base:6.3f} s")
    print(f"  with the 9 published models:    {shown:6.3f} s  ({shown / base:.2f} x baseline, "
          f"{shown / TARGET_PAGE:.2f} x the {TARGET_PAGE:.0f} s target)")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_dir():
        sys.exit("usage: python benchmarks/bench_published.py RESULTS (a results folder of `genebench run`)")
    main(Path(sys.argv[1]))
