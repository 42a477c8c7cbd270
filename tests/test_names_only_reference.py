"""The names-only reference: stored for the bundled data, read back checked, shown beside Understanding."""

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pytest  # noqa: E402

from genebench.cli import main  # noqa: E402
from genebench.controls.reference import NamesOnlyReader, names_only_reference, store_reference  # noqa: E402
from genebench.data import open_data  # noqa: E402
from genebench.errors import SourceFormatError  # noqa: E402
from genebench.leaderboard.site import leaderboard_data  # noqa: E402
from genebench.leaderboard.validate import validate_results  # noqa: E402
from genebench.report import understanding_note  # noqa: E402
from genebench.results import load_results  # noqa: E402
from tests.leaderboard.leaderboard_helpers import write_model  # noqa: E402

READERS = (NamesOnlyReader("MiniLM over HGNC names", 0.0014, -0.0004, 0.0031, 117, 30),
           NamesOnlyReader("symbol character 1-3-grams", -0.0017, -0.0035, 0.0001, 117, 34))


def test_a_stored_reference_reads_back_for_its_data_only(tmp_path):
    path = tmp_path / "names_only.json"
    stored = store_reference("abc123", "family bootstrap, slopes refitted", READERS, path)
    assert stored.readers == READERS and stored.data_hash == "abc123"
    assert names_only_reference("abc123", path) == stored
    assert names_only_reference("another", path) is None
    assert names_only_reference("abc123", tmp_path / "absent.json") is None
    title, minilm, chars = stored.lines()
    assert title.startswith("names-only reference, measured on data abc123 (understanding, family folds")
    assert minilm == "  MiniLM over HGNC names: +0.001 [-0.000, +0.003], significant on 30 of 117 tasks"
    assert chars == "  symbol character 1-3-grams: -0.002 [-0.004, +0.000], significant on 34 of 117 tasks"


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r["readers"][0].update(mean=0.5), "mean 0.5 lies outside its interval"),
    (lambda r: r["readers"][0].update(high=float("nan")), "must be finite numbers in [-1, 1]"),
    (lambda r: r["readers"][1].update(n_significant=200), "200 significant tasks of 117"),
    (lambda r: r.pop("method"), "expected the JSON `store_reference` writes"),
    (lambda r: r["readers"][0].update(extra=1), "expected the JSON `store_reference` writes"),
])
def test_a_damaged_reference_is_refused_in_one_line(tmp_path, edit, message):
    path = tmp_path / "names_only.json"
    store_reference("abc123", "family bootstrap, slopes refitted", READERS, path)
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record))
    with pytest.raises(SourceFormatError, match="names-only reference") as error:
        names_only_reference("abc123", path)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_the_bundled_reference_was_measured_on_the_bundled_data():
    """Rebuilding the snapshot without re-measuring (`bench_understanding.py --store-reference`) fails here."""
    data_hash = open_data().data_hash
    reference = names_only_reference(data_hash)
    assert reference is not None, f"no names-only reference for the bundled data {data_hash}"
    assert {r.model for r in reference.readers} == {"MiniLM over HGNC names", "symbol character 1-3-grams"}
    assert all(r.n_tasks > 100 for r in reference.readers)


def test_report_and_leaderboard_show_the_reference_beside_understanding(tmp_path, capsys):
    """A real family-fold run on the bundled data: `run`, `report` and the page each show the reference; results of
    other data show none."""
    reference = names_only_reference(open_data().data_hash)
    out = tmp_path / "run"
    assert main(["run", "--input", "random", "--name", "test/random", "--scheme", "family", "--tasks",
                 "long vs short range TF", "--out", str(out)]) == 0
    assert "\n".join(reference.lines()) in capsys.readouterr().out
    assert "\n".join(reference.lines()) in understanding_note(load_results(out))
    assert leaderboard_data(validate_results(out), published=False)["names_only"] == reference.lines()
    write_model(tmp_path / "other", "org/other", scheme="family")
    assert "names-only reference" not in understanding_note(load_results(tmp_path / "other"))
    assert leaderboard_data(validate_results(tmp_path / "other"), published=False)["names_only"] == []
