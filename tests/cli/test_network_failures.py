"""Without the network, every command that needs a remote service fails in one line, naming the host, without
waiting on the network: offline, nothing connects; with the host unreachable, it is tried once, with no retries.

Hosts are 127.0.0.1 ports with nothing listening, never real services; HF_HUB_OFFLINE=1 is set by conftest. No
test bounds wall-clock seconds (a loaded machine takes longer to import torch); the connections are counted.
"""

import socket

import huggingface_hub.constants
import pytest

from genebench.cli import main
from genebench.constants import SNAPSHOT_DIR
from genebench.network import NetworkError, require_hub, short_url
from model_adapters.clients import FetchError, NCBIClient, UniProtClient
from model_adapters.hub import resolve_model

HUB_MODEL = "genebench-tests/not-a-cached-model"


@pytest.fixture
def closed_port() -> int:
    """A local port that refuses connections: bound, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def connections(monkeypatch) -> list[tuple[str, int]]:
    """The address of every socket connection the test opens (each connection still goes ahead)."""
    seen: list[tuple[str, int]] = []
    connect = socket.socket.connect

    def recorded(sock: socket.socket, address: tuple[str, int]) -> None:
        seen.append(address)
        connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", recorded)
    return seen


@pytest.fixture
def results(tmp_path):
    out = tmp_path / "results"
    assert main(["run", "--input", "random", "--tasks", "TF vs non-TF", "--out", str(out)]) == 0
    return out


def one_line(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err[-1]


def assert_one_line_failure(code: int, line: str, *, host: str) -> None:
    assert code == 2
    assert line.startswith("genebench ") and ": error: " in line and host in line
    assert "Traceback" not in line and len(line) < 400


def test_submit_and_push_offline_fail_in_one_line(capsys, results, connections):
    code, line = one_line(capsys, "submit", results, "--repo", "org/results", "--allow-unverified-task-set")
    assert_one_line_failure(code, line, host="huggingface.co")
    assert "HF_HUB_OFFLINE is set" in line
    code, line = one_line(capsys, "push", SNAPSHOT_DIR, "--repo", "org/data")
    assert_one_line_failure(code, line, host="huggingface.co")
    assert connections == []


def test_submit_to_an_unreachable_hub_fails_fast_without_retries(capsys, results, monkeypatch, closed_port,
                                                                connections):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{closed_port}")
    code, line = one_line(capsys, "submit", results, "--repo", "org/results", "--allow-unverified-task-set")
    assert_one_line_failure(code, line, host=f"127.0.0.1:{closed_port}")
    assert "cannot reach the Hugging Face Hub" in line and "Retry" not in capsys.readouterr().err
    assert connections == [("127.0.0.1", closed_port)]


def test_uncached_hub_model_offline_is_one_line(capsys, tmp_path, connections):
    code, line = one_line(capsys, "run", "--model", HUB_MODEL, "--input", "description",
                          "--tasks", "TF vs non-TF", "--out", tmp_path / "out")
    assert_one_line_failure(code, line, host="huggingface.co")
    assert f"model '{HUB_MODEL}': not in the local Hugging Face cache" in line
    assert connections == []  # no network to wait on: the offline cache is all it reads


def test_uncached_hub_model_with_the_hub_unreachable(monkeypatch, closed_port, connections):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{closed_port}")
    with pytest.raises(NetworkError, match=f"127.0.0.1:{closed_port}.*download it once"):
        resolve_model(HUB_MODEL + "-unreachable")
    assert connections == [("127.0.0.1", closed_port)]  # tried once, no retries
    with pytest.raises(NetworkError, match="cannot reach the Hugging Face Hub"):
        require_hub("test")


def test_rest_failures_name_the_host_without_multi_kb_urls(tmp_path, closed_port):
    entrez_ids = [str(i) for i in range(100_000, 100_400)]  # one request of ~2.8 KB of ids
    client = NCBIClient(f"http://127.0.0.1:{closed_port}/eutils", cache_dir=tmp_path, batch_size=400)
    with pytest.raises(FetchError) as error:
        client.summaries(entrez_ids)
    message = str(error.value)
    assert f"ncbi (127.0.0.1:{closed_port}): no response" in message and len(message) < 300
    client = UniProtClient(f"http://127.0.0.1:{closed_port}", cache_dir=tmp_path)
    with pytest.raises(FetchError, match=f"uniprot \\(127.0.0.1:{closed_port}\\)"):
        client.sequences(["P04637"])


def test_short_url_keeps_short_urls():
    assert short_url("https://rest.ensembl.org/sequence/id/X") == "https://rest.ensembl.org/sequence/id/X"


def test_hub_data_with_the_hub_unreachable_is_one_line(capsys, monkeypatch, closed_port, connections):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{closed_port}")
    code, line = one_line(capsys, "tasks", "--data", "genebench-tests/not-downloaded-data")
    assert_one_line_failure(code, line, host=f"127.0.0.1:{closed_port}")
    assert connections == [("127.0.0.1", closed_port)]
    assert "not downloaded before, and the Hub" in line
