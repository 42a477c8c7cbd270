"""Every line the main job prints names its fold scheme, fits the screen, and a log line never breaks a bar."""

import io
import logging
import os
import re
import subprocess
import sys

from genebench.progress import ProgressWriter
from genebench.report import MAX_LINE

TASK = "long vs short range TF"


def genebench(*argv: str) -> subprocess.CompletedProcess:
    """The command as a user runs it: its own process, so stderr holds every log line and bar it writes."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "genebench", *argv], capture_output=True, text=True, env=env,
                          timeout=600)


def test_counts_and_resume_lines_name_their_scheme(tmp_path):
    args = ["run", "--input", "random", "--name", "test/lines", "--tasks", TASK, "--out", str(tmp_path / "out")]
    first = genebench(*args)
    assert first.returncode == 0, first.stderr
    assert "paper folds: 1 task to score, 0 already done" in first.stderr
    assert "family folds: 1 task to score, 0 already done" in first.stderr
    assert ": paper folds 1 task; family folds 1 task\n" in first.stdout
    assert [line for line in (first.stdout + first.stderr).splitlines() if len(line) > MAX_LINE] == []
    again = genebench(*args)  # a rerun keeps everything, and says so per scheme
    assert again.returncode == 0, again.stderr
    assert "paper folds: 0 tasks to score, 1 already done" in again.stderr
    assert "family folds: 0 tasks to score, 1 already done" in again.stderr
    assert not re.search(r"\b0 of 0 genes|0gene", again.stderr)  # no empty encoding bar on a resume
    assert "fontManager" not in first.stderr + again.stderr and "constant columns" not in first.stderr


def test_a_log_line_written_while_a_bar_is_drawn_stays_whole():
    from tqdm import tqdm

    stream = io.StringIO()
    handler = ProgressWriter(stream)
    logger = logging.getLogger("genebench.test_screen_lines")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with tqdm(total=10, desc="probing (paper folds)", file=stream, mininterval=0, ascii=True) as bar:
            bar.update(3)
            logger.warning("task 'HLA class I vs class II' skipped under family folds")
            bar.update(3)
    finally:
        logger.removeHandler(handler)
    lines = re.split(r"[\r\n]", stream.getvalue())
    assert "task 'HLA class I vs class II' skipped under family folds" in lines


class _Described:
    """Random vectors behind a real description source's encoding cost: what `CachedEncoder` counts."""

    def __init__(self, hgnc, source) -> None:
        from model_adapters.baselines import RandomAdapter

        self.inner, self.source = RandomAdapter(hgnc=hgnc, dim=8), source
        self.meta = self.inner.meta

    def encoding_cost(self, symbols):
        return self.source.lengths(symbols)

    def encode(self, symbols):
        return self.inner.encode(symbols)


def test_encoding_progress_counts_characters_of_text_not_genes(fixtures, hgnc_file, tmp_path, caplog):
    from genebench.symbols import read_hgnc
    from model_adapters.cache import CachedEncoder
    from model_adapters.description_sources import DescriptionSource

    hgnc = read_hgnc(hgnc_file)
    source = DescriptionSource("refseq", hgnc=hgnc, path=fixtures / "refseq_summaries" /
                               "refseq_gene_summary_9606.tsv")
    genes = ["TP53", "A4GALT", "NOTAGENE"]
    texts = source.describe(genes).texts
    assert source.lengths(genes) == [len(texts["TP53"]), len(texts["A4GALT"]), 0]
    assert len(texts["TP53"]) > 5 * len(texts["A4GALT"])  # a summary costs many times a name
    caplog.set_level(logging.INFO, logger="genebench.progress")
    CachedEncoder(_Described(hgnc, source), cache_dir=tmp_path / "cache").encode(genes)
    total = len(texts["TP53"]) + len(texts["A4GALT"])
    assert f": {total} of {total} characters (100.0%)" in caplog.text
