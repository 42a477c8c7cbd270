"""The embedding cache trusts only what it wrote; names from users stay data: never a path out, markup or mathtext."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from reliability_helpers import TASK, result_files

from genebench.atomic import write_atomic
from genebench.embeddings import GeneEmbeddings
from genebench.model_info import ModelInfo
from genebench.results import path_component, result_path
from model_adapters.baselines import RandomAdapter
from model_adapters.cache import CachedEncoder

GENES = ["TP53", "BRCA1", "MYC", "EGFR"]
HGNC = pd.DataFrame({"symbol": GENES})


def _cached(tmp_path: Path) -> CachedEncoder:
    return CachedEncoder(RandomAdapter(hgnc=HGNC, dim=8), cache_dir=tmp_path / "cache")


def _replace_vectors(path: Path) -> None:
    """Same symbols and metadata (its recorded hash too), other vectors: a file swapped under the same key."""
    table = pq.read_table(path)
    other = pa.FixedSizeListArray.from_arrays(pa.array(np.full(table.num_rows * 8, 9.0, np.float32)), 8)
    pq.write_table(table.set_column(1, "vector", other).replace_schema_metadata(table.schema.metadata), path)


def _drop_hash(path: Path) -> None:
    table = pq.read_table(path)
    meta = {k: v for k, v in table.schema.metadata.items() if k != b"genebench.sha256"}
    pq.write_table(table.replace_schema_metadata(meta), path)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:50])


def _edit_model_record(path: Path) -> None:
    table = pq.read_table(path)
    meta = dict(table.schema.metadata)
    model = json.loads(meta[b"genebench.model"])
    model["revision"] = "edited"
    meta[b"genebench.model"] = json.dumps(model).encode()
    pq.write_table(table.replace_schema_metadata(meta), path)


CACHE_DAMAGE = {
    "vectors replaced under the same key": (_replace_vectors, "does not match the sha256 recorded"),
    "content hash removed": (_drop_hash, "no content hash recorded"),
    "truncated": (_truncate, "not a readable parquet file"),
    "model record edited": (_edit_model_record, "does not match the sha256 recorded"),
}


@pytest.mark.parametrize("case", CACHE_DAMAGE, ids=list(CACHE_DAMAGE))
def test_a_damaged_cache_entry_is_reported_and_rebuilt(case, tmp_path):
    damage, fragment = CACHE_DAMAGE[case]
    fresh = _cached(tmp_path).encode(GENES)
    damage(_cached(tmp_path).path)
    with pytest.warns(UserWarning, match=fragment):
        again = _cached(tmp_path).encode(GENES)
    np.testing.assert_array_equal(again.vectors, fresh.vectors)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rebuilt entry is trusted again
        np.testing.assert_array_equal(_cached(tmp_path).encode(GENES).vectors, fresh.vectors)


def test_an_intact_cache_entry_is_used_without_a_word(tmp_path):
    first = _cached(tmp_path).encode(GENES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(_cached(tmp_path).encode(GENES).vectors, first.vectors)


@pytest.mark.parametrize("name", ["..", "../../etc", "a/b", "", ".hidden", "a$x^^y$", "x" * 300, "~user", "C:\\x"])
def test_a_name_is_one_safe_path_component(name):
    part = path_component(name)
    assert "/" not in part and "\\" not in part and part not in ("", ".", "..") and not part.startswith(".")
    assert len(part) <= 120 and (part == name or part != path_component(name + "x"))


@pytest.mark.parametrize(("model_id", "revision"), [("..", ".."), ("../../x", "../y"), ("org/name", "a/../../b")])
def test_result_paths_stay_inside_their_folder(model_id, revision, tmp_path):
    model = ModelInfo(id=model_id, revision=revision, input="random")
    path = result_path(tmp_path, model, "../../task")
    assert tmp_path.resolve() in path.resolve().parents


def test_cache_paths_stay_inside_the_cache(tmp_path):
    from model_adapters.cache import cache_path

    path = cache_path(ModelInfo(id="../../outside", input="random"), tmp_path)
    assert tmp_path.resolve() in path.resolve().parents


def test_a_random_run_named_dotdot_writes_only_inside_out(cli, tmp_path):
    out = tmp_path / "box" / "out"
    outcome = cli("run", "--input", "random", "--model", "..", "--tasks", TASK, "--out", out)
    assert outcome.code == 0, outcome.err[-800:]
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and all(out in p.parents for p in written)


def test_dollar_signs_in_names_are_drawn_as_text(cli, results_copy, tmp_path):
    for path in result_files(results_copy):
        document = json.loads(path.read_text())
        document["model"]["id"] = "lab/a$x^^y$"
        path.write_text(json.dumps(document))
    outcome = cli("report", results_copy, "--out", tmp_path / "report")
    assert outcome.code == 0, outcome.err[-800:]
    assert all((tmp_path / "report" / name).stat().st_size > 1000
               for name in ("categories.png", "categories.svg", "heatmap.png", "heatmap.svg"))


def test_report_figures_with_mathtext_names():
    from genebench.report import plot_categories

    frame = pd.DataFrame({"model": "a$x^^y$", "model_revision": "r$1$", "task": ["t1", "t2"],
                          "category": "localization", "type": "binary", "metric": "roc_auc", "is_main": True,
                          "mean": [0.7, 0.8], "std": 0.0, "coverage": 1.0, "data_hash": "d", "data_tasks": 2.0})
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        written = plot_categories(frame, Path(folder) / "c")
        assert all(path.stat().st_size > 1000 for path in written)


SVGS = {
    "script element": '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><rect width="1"/></svg>',
    "event handler": '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="1"/></svg>',
    "javascript link": '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
                       '<use xlink:href="javascript:alert(1)"/></svg>',
    "foreign object": '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><p>x</p></foreignObject></svg>',
    "external style": '<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(http://x/y.css);</style></svg>',
    "escaped import": '<svg xmlns="http://www.w3.org/2000/svg"><style>@\\69mport "http://x/y.css";</style></svg>',
    "escaped url": '<svg xmlns="http://www.w3.org/2000/svg"><style>rect{fill:u\\72l(http://x/y)}</style></svg>',
    "escaped url attribute": '<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill:u\\rl(http://x/y)"/></svg>',
    "url with a space": '<svg xmlns="http://www.w3.org/2000/svg"><rect mask="url( http://x/y)"/></svg>',
    "tab in a scheme": '<svg xmlns="http://www.w3.org/2000/svg"><rect fill="java&#9;script:alert(1)"/></svg>',
}


@pytest.mark.parametrize("case", SVGS, ids=list(SVGS))
def test_the_leaderboard_sanitises_submitted_svgs(case, tmp_path):
    from genebench.leaderboard.figures import clean_figure

    (tmp_path / "f.svg").write_text(SVGS[case])
    cleaned = clean_figure(tmp_path / "f.svg").decode().lower()
    for marker in ("<script", "onload", "javascript:", "script:", "foreignobject", "@import", "http://x", "\\", "\t"):
        assert marker not in cleaned


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n" + b"\0" * 40, b"<svg onload=alert(1)>", b"GIF89a"],
                         ids=["magic only", "markup named png", "gif named png"])
def test_the_leaderboard_drops_figures_it_cannot_reencode(content, tmp_path):
    from genebench.leaderboard.figures import FigureError, clean_figure

    (tmp_path / "f.png").write_bytes(content)
    with pytest.raises(FigureError, match="not a decodable PNG"):
        clean_figure(tmp_path / "f.png")


def test_an_entity_declaring_svg_is_dropped(tmp_path):
    from genebench.leaderboard.figures import FigureError, clean_figure

    (tmp_path / "f.svg").write_text('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg"/>')
    with pytest.raises(FigureError, match="declaring XML entities"):
        clean_figure(tmp_path / "f.svg")


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_files_are_written_with_the_umask_mode(umask, mode, tmp_path):
    previous = os.umask(umask)
    try:
        written = write_atomic(tmp_path / "f.json", "{}")
        GeneEmbeddings(np.array(["TP53"]), np.ones((1, 2))).save(tmp_path / "e.parquet")
    finally:
        os.umask(previous)
    assert written.stat().st_mode & 0o777 == mode
    assert (tmp_path / "e.parquet").stat().st_mode & 0o777 == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.parquet", "f.json"]


def test_run_results_are_readable_by_others(random_results):
    assert all(path.stat().st_mode & 0o044 for path in random_results.rglob("*") if path.is_file())


def test_a_hostile_svg_beside_results_is_published_sanitised(cli, results_copy, tmp_path):
    """The site keeps the figure, rebuilt without what could fetch or run, and every result as it was."""
    from reliability_helpers import snapshot

    (results_copy / "figures").mkdir(exist_ok=True)
    (results_copy / "figures" / "evil.svg").write_text(SVGS["escaped url"].replace("</svg>", SVGS["script element"]
                                                       [len('<svg xmlns="http://www.w3.org/2000/svg">'):]))
    before = snapshot(results_copy)
    outcome = cli("leaderboard", "build", results_copy, "--out", tmp_path / "site")
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err[-2000:]
    published = [p for p in (tmp_path / "site" / "figures").iterdir() if p.name.endswith("evil.svg")]
    assert len(published) == 1
    text = published[0].read_text().lower()
    assert "<rect" in text and "http://x" not in text and "<script" not in text and "\\" not in text
    assert snapshot(results_copy) == before
