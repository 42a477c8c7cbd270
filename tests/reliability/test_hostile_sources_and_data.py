"""Hostile build sources and tampered built data: one clear line each, the data folder as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from reliability_helpers import TASK, fails, no_partial_files, result_files, snapshot

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _sources(tmp_path: Path, family: str) -> Path:
    root = tmp_path / "sources"
    shutil.copytree(FIXTURES / family, root / family)
    (root / "hgnc").mkdir()
    shutil.copy(FIXTURES / "hgnc" / "hgnc_complete_set.txt", root / "hgnc")
    return root


def _gmt_not_utf8(root: Path) -> None:
    path = root / "reactome" / "ReactomePathways.gmt"
    data = path.read_bytes()
    path.write_bytes(data[:200] + b"\xff\xfe\x80" + data[200:])


def _cyclic_hierarchy(root: Path) -> None:
    path = root / "reactome" / "ReactomePathwaysRelation.txt"
    lines = path.read_text().splitlines()
    parent, child = next(line.split("\t") for line in lines if line.startswith("R-HSA"))
    path.write_text("\n".join([*lines, f"{child}\t{parent}"]) + "\n")


def _truncated_hgnc(root: Path) -> None:
    path = root / "hgnc" / "hgnc_complete_set.txt"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _empty_hgnc(root: Path) -> None:
    (root / "hgnc" / "hgnc_complete_set.txt").write_bytes(b"")


def _link_out(root: Path) -> None:
    path = root / "humantfs" / "DatabaseExtract_v_1.01.csv"
    path.unlink()
    path.symlink_to("/etc/hostname")


def _humantfs_garbage(root: Path) -> None:
    (root / "humantfs" / "DatabaseExtract_v_1.01.csv").write_bytes(b"\x00\x01\x02garbage\xff")


# family -> (damage done to a copy of its fixture sources, fragments of the one error line)
SOURCES = {
    "gmt not UTF-8": ("reactome", _gmt_not_utf8, ("reactome sources cannot be parsed (UnicodeDecodeError",)),
    "cyclic Reactome hierarchy": ("reactome", _cyclic_hierarchy, ("the pathway hierarchy has a cycle through",)),
    "truncated HGNC": ("humantfs", _truncated_hgnc, ("ends mid-line (a truncated download?)",)),
    "empty HGNC": ("humantfs", _empty_hgnc, ("cannot be read as HGNC's complete set",)),
    "symlink out of the sources": ("humantfs", _link_out, ("a link to '/etc/hostname', outside the sources folder",)),
    "binary source table": ("humantfs", _humantfs_garbage, ("humantfs",)),
}


@pytest.mark.parametrize("case", SOURCES, ids=list(SOURCES))
def test_hostile_source(case, cli, tmp_path):
    family, damage, fragments = SOURCES[case]
    root = _sources(tmp_path, family)
    damage(root)
    out = tmp_path / "data"
    fails(cli("build", "--out", out, "--sources", root, "--family", family), "build", *fragments)
    assert not (out / "genebench.json").exists()
    no_partial_files(out)


def test_a_failed_build_leaves_the_previous_folder_as_it_was(cli, tmp_path):
    good = _sources(tmp_path, "humantfs")
    out = tmp_path / "data"
    assert cli("build", "--out", out, "--sources", good, "--family", "humantfs").code == 0
    before = snapshot(out)
    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    shutil.copytree(FIXTURES / "reactome", bad / "reactome")
    _gmt_not_utf8(bad)
    fails(cli("build", "--out", out, "--sources", bad, "--family", "reactome"), "build", "cannot be parsed")
    assert snapshot(out) == before
    no_partial_files(out)


def test_leftovers_of_a_killed_build_are_removed(cli, tmp_path):
    root = _sources(tmp_path, "humantfs")
    out = tmp_path / "data"
    (out / ".staging-humantfs-1234abcd").mkdir(parents=True)
    (out / ".staging-humantfs-1234abcd" / "fold_0.parquet").write_bytes(b"half")
    (out / ".old-hgnc-99").mkdir()
    assert cli("build", "--out", out, "--sources", root, "--family", "humantfs").code == 0
    no_partial_files(out)


def test_a_deeply_nested_or_non_flat_genecorpus_pickle(tmp_path):
    from dataset_builders.genecorpus import read_class_dict
    from genebench.errors import SourceFormatError

    depth = 200_000
    (tmp_path / "deep.pickle").write_bytes(b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b".")
    with pytest.raises(SourceFormatError, match="expected a pickled dict of class name -> list of Ensembl ids"):
        read_class_dict(tmp_path / "deep.pickle")
    nested = b"\x80\x02}X\x01\x00\x00\x00a" + b"]" * depth + b"a" * (depth - 1) + b"s."
    (tmp_path / "nested.pickle").write_bytes(nested)
    with pytest.raises(SourceFormatError, match="holding other values"):
        read_class_dict(tmp_path / "nested.pickle")


def _flip_labels_same_size(data: Path) -> None:
    path = data / "humantfs" / "fold_0.parquet"
    table = pq.read_table(path)
    labels = [["non-TF"] if row == ["TF"] else ["TF"] for row in table["labels"].to_pylist()]
    flipped = table.set_column(table.column_names.index("labels"), "labels", pa.array(labels, table["labels"].type))
    sink = pa.BufferOutputStream()
    pq.write_table(flipped, sink)
    data_bytes = sink.getvalue().to_pybytes()
    size = path.stat().st_size
    assert len(data_bytes) <= size
    path.write_bytes(data_bytes + b"\0" * (size - len(data_bytes)))


def _edit_manifest(edit):
    def damage(data: Path) -> None:
        manifest = json.loads((data / "genebench.json").read_text())
        edit(manifest)
        (data / "genebench.json").write_text(json.dumps(manifest))
    return damage


def _truncate_manifest(data: Path) -> None:
    text = (data / "genebench.json").read_bytes()
    (data / "genebench.json").write_bytes(text[: len(text) // 2])


def _remove_a_fold(data: Path) -> None:
    (data / "humantfs" / "fold_1.parquet").unlink()


DATA = {
    "labels flipped, same size": (_flip_labels_same_size, ("'humantfs/fold_0.parquet' does not match its sha256",)),
    "data hash edited": (_edit_manifest(lambda m: m.__setitem__("data_hash", "deadbeefdeadbeef")),
                         ("names data_hash 'deadbeefdeadbeef', but its file hashes give",)),
    "file hash edited": (
        _edit_manifest(lambda m: m["files"]["humantfs/fold_0.parquet"].__setitem__("sha256", "0" * 64)),
        ("manifest was edited",)),
    "truncated manifest": (_truncate_manifest, ("genebench.json is not valid JSON",)),
    "manifest not an object": (lambda d: (d / "genebench.json").write_text("[1, 2]"),
                               ("expected an object with 'families', 'files'",)),
    "a fold deleted": (_remove_a_fold, ("'humantfs/fold_1.parquet' is missing or does not match",)),
}


@pytest.mark.parametrize("case", DATA, ids=list(DATA))
def test_tampered_data_is_refused(case, cli, data_copy, tmp_path):
    damage, fragments = DATA[case]
    damage(data_copy)
    out = tmp_path / "out"
    fails(cli("run", "--input", "random", "--data", data_copy, "--tasks", TASK, "--out", out), "run", *fragments)
    assert not result_files(out)


def test_the_bundled_snapshot_verifies(data_copy):
    from genebench.data import BenchmarkData

    BenchmarkData(data_copy).verify()
