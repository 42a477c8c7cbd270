"""Sources that are URLs go through the datasets DownloadManager: served here from 127.0.0.1."""

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import datasets.config
import pytest

from dataset_builders.base import Source
from dataset_builders.humantfs import HumanTFs
from genebench.build import build_data
from genebench.data import BenchmarkData
from genebench.errors import MissingSourceError, SourceFormatError
from genebench.hashing import file_sha256


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def server(fixtures, monkeypatch):
    """The fixtures folder over HTTP on 127.0.0.1, with downloads allowed for `datasets`."""
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(fixtures)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _family(url: str, sha256: str | None) -> type:
    """humantfs as it would be declared with its source at `url` (a family subclass, as any family is)."""
    source = Source(url=url, version="v1.01", local_names=("DatabaseExtract_v_1.01.csv",), sha256=sha256)
    return type("ServedHumanTFs", (HumanTFs,), {"SOURCES": {"extract": source}})


def test_sources_are_downloaded_verified_and_cached(server, fixtures, tmp_path):
    extract = fixtures / "humantfs" / "DatabaseExtract_v_1.01.csv"
    family = _family(f"{server}/humantfs/DatabaseExtract_v_1.01.csv", file_sha256(extract))
    config = datasets.DownloadConfig(cache_dir=str(tmp_path / "downloads"))
    for _ in range(2):  # the second time on a warm datasets cache: its splits are not generated again
        builder = family(cache_dir=str(tmp_path / "build"), hgnc=f"{server}/hgnc/hgnc_complete_set.txt")
        builder.download_and_prepare(download_config=config)
        read = builder.read_family(datasets.DownloadManager(download_config=config))
        assert [m.name for m in read.tasks] == ["TF vs non-TF"]
        assert read.source_versions == {"extract": "v1.01", "hgnc": "2024-10-17"}
        assert sum(len(split) for split in builder.as_dataset().values()) == read.tasks[0].n_entities == len(read.rows)
    assert any((tmp_path / "downloads").rglob("*")), "downloads are cached by the DownloadManager"


def test_a_download_that_does_not_match_its_checksum_is_refused(server, tmp_path):
    family = _family(f"{server}/humantfs/DatabaseExtract_v_1.01.csv", "0" * 64)
    builder = family(cache_dir=str(tmp_path / "build"), hgnc=f"{server}/hgnc/hgnc_complete_set.txt")
    with pytest.raises(SourceFormatError, match="does not match its pinned sha256 000000000000"):
        builder.download_and_prepare(download_config=datasets.DownloadConfig(cache_dir=str(tmp_path / "dl")))


def test_an_unreachable_source_names_it_and_what_to_do(server, tmp_path, fixtures):
    with pytest.raises(MissingSourceError, match=r"humantfs source 'hgnc': cannot download .*/nope.txt.*--sources"):
        build_data(tmp_path, ["humantfs"], hgnc=f"{server}/nope.txt", sources_dir=fixtures, progress=False)
    assert not (tmp_path / "humantfs").exists()
    build_data(tmp_path, ["humantfs"], hgnc=f"{server}/hgnc/hgnc_complete_set.txt", sources_dir=fixtures,
               progress=False)
    assert BenchmarkData(tmp_path).families == ["humantfs"]
