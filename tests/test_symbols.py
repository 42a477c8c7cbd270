import gzip
import json

import pandas as pd
import pytest

from genebench.errors import SourceFormatError
from genebench.symbols import SymbolMapper, hgnc_version, read_hgnc


@pytest.fixture(scope="module")
def mapper(hgnc_file):
    return SymbolMapper.from_file(hgnc_file)


def test_reads_the_real_hgnc_excerpt(hgnc_file):
    table = read_hgnc(hgnc_file)
    assert len(table) == 352
    assert table.loc[table["symbol"] == "TP53", "ensembl_gene_id"].item() == "ENSG00000141510"
    assert hgnc_version(table) <= "2024-10-18"


def test_approved_previous_alias_and_case(mapper):
    report = mapper.resolve(["TP53", "tp53", "p53", "ARD1A", "NAA10"])
    assert report.mapping == {"TP53": "TP53", "tp53": "TP53", "p53": "TP53", "ARD1A": "NAA10", "NAA10": "NAA10"}
    assert report.renamed == {"tp53": "TP53", "p53": "TP53", "ARD1A": "NAA10"}


def test_the_literal_na_is_a_previous_symbol_of_xk(mapper):
    # HGNC lists "NA" (Kell blood group precursor) as a previous symbol of XK: it must resolve, not vanish.
    report = mapper.resolve(["NA", "NOT_A_GENE"])
    assert report.mapping == {"NA": "XK"}
    assert report.unknown == ["NOT_A_GENE"]
    assert report.summary() == {"n_mapped": 1, "n_renamed": 1, "n_ambiguous": 0, "n_unknown": 1}


def test_ambiguous_alias_is_reported_not_guessed():
    table = pd.DataFrame({"symbol": ["GENEA", "GENEB"], "name": ["", ""], "prev_symbol": ["", ""],
                          "alias_symbol": ["SHARED", "SHARED|NA"]})
    report = SymbolMapper(table).resolve(["SHARED", "NA"])
    assert report.ambiguous == {"SHARED": ["GENEA", "GENEB"]}
    assert report.mapping == {"NA": "GENEB"}


def test_na_is_never_a_missing_value(tmp_path, hgnc_file):
    text = hgnc_file.read_text().splitlines()
    header = text[0].split("\t")
    row = text[1].split("\t")
    row[header.index("symbol")] = "NA"
    path = tmp_path / "hgnc.txt"
    path.write_text("\n".join([text[0], "\t".join(row)]) + "\n")
    assert read_hgnc(path)["symbol"].tolist() == ["NA"]
    assert SymbolMapper.from_file(path).resolve(["NA"]).mapping == {"NA": "NA"}


def test_json_and_gzip_flavours_read_the_same(tmp_path, hgnc_file):
    table = read_hgnc(hgnc_file)
    docs = [{k: (v.split("|") if k in ("prev_symbol", "alias_symbol") and v else v) for k, v in row.items() if v}
            for row in table.to_dict("records")]
    path = tmp_path / "hgnc.json.gz"
    with gzip.open(path, "wt") as handle:
        json.dump({"response": {"docs": docs}}, handle)
    assert read_hgnc(path)[["symbol", "prev_symbol"]].equals(table[["symbol", "prev_symbol"]])


def test_by_identifier(mapper):
    assert mapper.by_identifier("ensembl_gene_id")["ENSG00000141510"] == "TP53"


def test_bad_hgnc_file_names_the_file(tmp_path):
    path = tmp_path / "hgnc.txt"
    path.write_text("gene\tid\nTP53\t1\n")
    with pytest.raises(SourceFormatError, match=r"hgnc.txt.*expected columns \['symbol'"):
        read_hgnc(path)
