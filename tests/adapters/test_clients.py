"""NCBI, Ensembl and UniProt clients against the fake 127.0.0.1 server: formats, retries, errors, cache."""

from __future__ import annotations

import pytest

from genebench.errors import SourceFormatError
from model_adapters.clients import EnsemblClient, FetchError, NCBIClient, UniProtClient
from model_adapters.clients.base import retry_after_seconds


@pytest.fixture()
def waits() -> list[float]:
    return []


def test_ncbi_summaries_skip_unknown_ids_and_are_cached(api, tmp_path):
    client = NCBIClient(api.url("ncbi"), cache_dir=tmp_path)
    records = client.summaries(["7157", "1956", "999999999"])
    assert records["7157"] == {"name": "TP53", "description": "tumor protein p53",
                               "summary": "This gene encodes a tumor suppressor protein."}
    assert set(records) == {"7157", "1956"}
    assert client.summaries(["999999999", "1956", "7157"]) == records
    assert api.requests["/ncbi/esummary.fcgi"] == 1  # the second call was answered from disk


def test_ensembl_genomic_and_cds_sequences(api, tmp_path):
    client = EnsemblClient(api.url("ensembl"), cache_dir=tmp_path)
    assert client.sequence("ENSG00000141510") == "ACGTACGTTTGACCA" * 20
    assert client.sequence("ENSG00000141510.17", "cds") == "ATGGAGGAGCCGCAGTCAGATCCTAGC"
    assert client.sequence("ENSG00000999999") is None  # Ensembl's 400 "ID ... not found"
    assert client.sequence("ENSG00000999999", "cds") is None


def test_uniprot_batches_fasta_and_ignores_malformed_accessions(api, tmp_path):
    client = UniProtClient(api.url("uniprot"), cache_dir=tmp_path, batch_size=1)
    found = client.sequences(["P04637", "P00533", "Q99999", "not-an-accession"])
    assert found["P04637"].startswith("MEEPQSDPSVEP") and len(found["P04637"]) == 393
    assert set(found) == {"P04637", "P00533"}
    assert api.requests["/uniprot/uniprotkb/accessions"] == 3  # three valid accessions, one per batch


def test_429_waits_as_retry_after_says_then_succeeds(api, tmp_path, waits):
    api.plan("/ncbi", (429, {"Retry-After": "7"}), (429, {}))
    client = NCBIClient(api.url("ncbi"), cache_dir=tmp_path, sleep=waits.append, max_tries=3)
    assert client.summaries(["7157"])["7157"]["name"] == "TP53"
    assert waits == [7.0, 4.0]  # Retry-After, then exponential backoff 2**2 without the header
    assert api.requests["/ncbi/esummary.fcgi"] == 3


def test_429_beyond_max_tries_is_a_fetch_error(api, tmp_path, waits):
    api.plan("/uniprot", *[(429, {"Retry-After": "120"})] * 5)
    client = UniProtClient(api.url("uniprot"), cache_dir=tmp_path, sleep=waits.append, max_tries=3, max_wait=5)
    with pytest.raises(FetchError, match="HTTP 429 after 3 tries.*rate-limiting"):
        client.sequences(["P04637"])
    assert waits == [5, 5]  # Retry-After capped at max_wait


def test_server_error_is_a_fetch_error_without_retry(api, tmp_path, waits):
    api.plan("/ensembl", (503, {}))
    client = EnsemblClient(api.url("ensembl"), cache_dir=tmp_path, sleep=waits.append)
    with pytest.raises(FetchError, match="expected HTTP 200, found HTTP 503.*rerun later"):
        client.sequence("ENSG00000141510")
    assert waits == []


def test_truncated_body_is_a_format_error_and_not_cached(api, tmp_path):
    api.plan("/uniprot", ("truncated",))
    client = UniProtClient(api.url("uniprot"), cache_dir=tmp_path)
    with pytest.raises(SourceFormatError, match="truncated"):
        client.sequences(["P04637"])
    assert len(client.sequences(["P04637"])["P04637"]) == 393  # the retry fetched the whole body


def test_a_file_in_the_http_cache_path_is_one_line_before_any_request(api, tmp_path):
    (tmp_path / "ncbi").write_text("not a folder")  # where the client's cache folder should be
    client = NCBIClient(api.url("ncbi"), cache_dir=tmp_path)
    with pytest.raises(NotADirectoryError, match=rf"^HTTP cache '{tmp_path}/ncbi/.*': '{tmp_path}/ncbi' is a file, "
                       r"expected a folder; move that file, or set GENEBENCH_CACHE to a folder"):
        client.summaries(["7157"])
    assert api.requests["/ncbi/esummary.fcgi"] == 0, "nothing was fetched that could not be kept"
    (tmp_path / "ncbi").unlink()
    assert set(client.summaries(["7157"])) == {"7157"}


def test_unreachable_server_names_the_base_url(tmp_path):
    client = NCBIClient("http://127.0.0.1:9", cache_dir=tmp_path, timeout=2)
    with pytest.raises(FetchError, match="no response.*127.0.0.1:9"):
        client.summaries(["7157"])


def test_non_json_ncbi_answer_is_a_format_error(api, tmp_path):
    client = NCBIClient(api.url("uniprot"), cache_dir=tmp_path)  # wrong base URL: FASTA, not JSON
    with pytest.raises(SourceFormatError, match="expected esummary JSON"):
        client.summaries(["7157"])


def test_retry_after_http_date_and_garbage():
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", 3.0) == 0.0  # a date in the past
    assert retry_after_seconds("soon", 3.0) == 3.0
