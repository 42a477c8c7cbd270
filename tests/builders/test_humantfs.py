import pytest

from dataset_builders.humantfs import HumanTFs, parse_extract
from genebench.errors import SourceFormatError


def test_parse_extract_reads_labels_and_keeps_symbols_as_given(fixtures):
    raw = parse_extract(fixtures / "humantfs" / "DatabaseExtract_v_1.01.csv", HumanTFs.TASKS[0])
    assert len(raw.rows) == 46
    assert raw.rows.iloc[0].tolist() == ["TFAP2A", "TF"]
    assert raw.label_names == ("non-TF", "TF")
    assert set(raw.rows["label"]) == {"TF", "non-TF"}


def test_missing_column_names_the_file_and_column(tmp_path):
    path = tmp_path / "DatabaseExtract_v_1.01.csv"
    path.write_text(",Ensembl ID,Gene,Is TF?\n0,ENSG1,TP53,Yes\n")
    with pytest.raises(SourceFormatError, match=r"DatabaseExtract_v_1.01.csv.*expected columns \['HGNC symbol'\]"):
        parse_extract(path, HumanTFs.TASKS[0])


def test_unexpected_label_value(tmp_path):
    path = tmp_path / "extract.csv"
    path.write_text(",HGNC symbol,Is TF?\n0,TP53,Maybe\n")
    with pytest.raises(SourceFormatError, match=r"'Is TF\?' holds \['Maybe'\]; expected 'Yes' or 'No'"):
        parse_extract(path, HumanTFs.TASKS[0])
