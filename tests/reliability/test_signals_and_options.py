"""Ctrl-C, SIGTERM and a repeated option behave the same in every fold scheme: a signal during either scheme's
probes exits in one line (130, 143), keeps every finished result whole, holds no lock and leaves no half-written
file, and the rerun resumes without rewriting a kept file; `--scheme paper --scheme family` runs both schemes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import TASK, no_partial_files, result_files

FAMILIES = ("--family", "uniprot_keywords", "hpa")
"""Enough tasks under each scheme that a signal sent after the scheme's first result lands among its probes."""
CODES = {"SIGINT": (130, "genebench: interrupted; finished results are kept, rerun the same command to resume."),
         "SIGTERM": (143, "genebench: terminated; finished results are kept, rerun the same command to resume.")}


def _scheme_files(out: Path, scheme: str) -> list[Path]:
    return [p for p in result_files(out) if ("folds-family" in p.parts) == (scheme == "family")]


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["paper", "family"])
@pytest.mark.parametrize("name", CODES)
def test_a_signal_during_either_scheme_stops_in_one_line_and_the_rerun_resumes(name, scheme, tmp_path):
    out, env = tmp_path / "out", {**os.environ, "GENEBENCH_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "genebench.cli", "run", "--input", "random", *FAMILIES, "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not _scheme_files(out, scheme) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(getattr(signal, name))
    _, err = process.communicate(timeout=300)
    code, line = CODES[name]
    assert process.returncode == code, err[-2000:]
    assert "Traceback" not in err and err.strip().splitlines()[-1] == line
    no_partial_files(out)
    kept = {p: p.read_bytes() for p in result_files(out)}
    total = len(kept)
    assert _scheme_files(out, scheme)  # it stopped during that scheme
    rerun = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    for path, data in kept.items():  # finished results are whole and never written again
        assert path.read_bytes() == data, path
    assert len(result_files(out)) > total


def test_a_repeated_option_adds_to_it_rather_than_replacing_it(cli, tmp_path):
    out = tmp_path / "out"
    outcome = cli("run", "--input", "random", "--tasks", TASK, "--tasks", "N1 targets", "--scheme", "paper", "--scheme",
                  "family", "--scheme", "paper", "--out", out)
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err[-2000:]
    names = sorted(p.name for p in result_files(out))
    assert len(names) == 4 and len(set(names)) == 2  # both tasks under both schemes, each once
    assert {"folds-family" in p.parts for p in result_files(out)} == {True, False}
    no_partial_files(out)
