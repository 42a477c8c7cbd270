import pickle

import pytest

from dataset_builders.genecorpus import Genecorpus, class_dict_task, read_class_dict
from genebench.errors import SourceFormatError

SPECS = {spec.name: spec for spec in Genecorpus.TASKS}


def test_pickle_and_csv_forms_read_alike(fixtures, tmp_path):
    from_csv = read_class_dict(fixtures / "genecorpus" / "n1_network.csv")
    assert set(from_csv) == {"n1_central", "n1_peripheral"}
    assert from_csv["n1_central"][0] == "ENSG00000140382"
    pickled = tmp_path / "n1_network.pickle"
    pickled.write_bytes(pickle.dumps(from_csv))
    assert read_class_dict(pickled) == from_csv


def test_n1_tasks_come_from_their_own_files_not_swapped(fixtures):
    assert Genecorpus.SOURCES["n1_network"].url.endswith("notch1_network/n1_network.pickle")
    network = read_class_dict(fixtures / "genecorpus" / "n1_network.csv")
    raw = class_dict_task(network, SPECS["N1 network"], "n1_network", ("n1_peripheral", "n1_central"),
                          fixtures / "genecorpus" / "n1_network.csv")
    assert raw.entity_id == "ensembl_gene_id" and len(raw.rows) == 24
    assert "by mistake" in SPECS["N1 network"].notes
    targets = read_class_dict(fixtures / "genecorpus" / "n1_target.pickle")
    assert set(targets) == {"n1_activated", "n1_nontarget"}
    with pytest.raises(SourceFormatError, match=r"expected classes \['n1_peripheral', 'n1_central'\]"):
        class_dict_task(targets, SPECS["N1 network"], "n1_network", ("n1_peripheral", "n1_central"),
                        fixtures / "genecorpus" / "n1_target.pickle")


def test_lys4_task_has_a_truthful_name_and_the_old_one_as_alias():
    spec = SPECS["bivalent vs Lys4-only-methylated"]
    assert spec.aliases == ("Lys4-only-methylated vs non-methylated",)


class _Exploit:
    def __reduce__(self):
        return (print, ("pwned",))


def test_a_pickle_that_runs_code_is_refused(tmp_path, capsys):
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps({"a": _Exploit()}))
    with pytest.raises(SourceFormatError, match="not allowed"):
        read_class_dict(path)
    assert "pwned" not in capsys.readouterr().out


def test_csv_with_bad_label_literals(tmp_path):
    path = tmp_path / "n1_network.csv"
    path.write_text('gene_id,label\nn1_central,"ENSG1, ENSG2"\n')
    with pytest.raises(SourceFormatError, match="Python list literals"):
        read_class_dict(path)
