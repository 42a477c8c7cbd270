from dataset_builders.hgnc import HGNC, hla_classes
from genebench.symbols import read_hgnc


def test_hla_group_588_has_44_genes_in_two_classes(hgnc_file):
    raw = hla_classes(read_hgnc(hgnc_file), HGNC.TASKS[0])
    assert len(raw.rows) == 44
    assert raw.rows["label"].value_counts().to_dict() == {"class II": 24, "class I": 20}
    assert raw.rows.set_index("entity").loc["HLA-DRA", "label"] == "class II"
    assert raw.rows.set_index("entity").loc["HLA-A", "label"] == "class I"
