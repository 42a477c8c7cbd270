import pytest

from dataset_builders.gene2gene import read_pairs
from genebench.errors import SourceFormatError


def test_pairs_keep_the_symbol_na_as_a_string(fixtures):
    folder = fixtures / "gene2gene"
    frame = read_pairs(folder / "train_text.txt", folder / "train_label.txt")
    assert len(frame) == 24
    assert frame.iloc[0].tolist() == ["NA", "NTNG2", "interacting"]


def test_label_count_must_match_pairs(fixtures, tmp_path):
    labels = tmp_path / "train_label.txt"
    labels.write_text("1\n0\n")
    with pytest.raises(SourceFormatError, match="24 pairs but 2 labels"):
        read_pairs(fixtures / "gene2gene" / "train_text.txt", labels)
