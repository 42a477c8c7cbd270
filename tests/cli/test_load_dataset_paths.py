"""What a Hugging Face user types first: `genebench` as a dataset name, and Python started beside a clone."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from genebench.cli import main
from genebench.data import open_data
from genebench.errors import MissingSourceError

ROOT = Path(__file__).resolve().parents[2]


def test_genebench_as_a_dataset_name_says_what_to_type_and_the_advice_works(capsys, tmp_path):
    assert main(["tasks", "--data", "genebench"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("genebench tasks: error: data 'genebench': not a data folder or Hub id ORG/NAME; ")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    call = re.search(r"load_dataset\(.*\)\)", err).group(0)[:-1]
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache")}
    loaded = subprocess.run([sys.executable, "-c", f"import datasets, genebench; print(datasets.{call})"],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert "fold_0" in loaded.stdout and "fold_4" in loaded.stdout


def test_the_package_folder_read_from_a_clone_root_gets_the_same_line(monkeypatch):
    monkeypatch.chdir(ROOT)  # `genebench` here is the package's own folder, which holds no data
    with pytest.raises(MissingSourceError, match=r"^data 'genebench': not a data folder or Hub id ORG/NAME; "):
        open_data("genebench")


def test_python_started_beside_a_clone_named_genebench_gets_one_clear_line(tmp_path):
    (tmp_path / "genebench").symlink_to(ROOT, target_is_directory=True)  # the clone, as `git clone URL` names it
    started = subprocess.run([sys.executable, "-c", "import genebench; genebench.load_task"], capture_output=True,
                             text=True, cwd=tmp_path, timeout=60)
    assert started.returncode == 1
    assert started.stderr.strip().splitlines()[-1] == (
        f"ImportError: `import genebench` found the clone folder '{tmp_path / 'genebench'}', not the package inside "
        f"it: run Python from the clone's root or any folder other than '{tmp_path}'."
    )
    from_root = subprocess.run([sys.executable, "-c", "import genebench; print(genebench.load_task.__module__)"],
                               capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert from_root.stdout.strip() == "genebench.catalogue", from_root.stderr[-2000:]
