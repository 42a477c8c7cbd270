"""Ctrl-C a real `genebench run` once its first result is written, then rerun it: what an interrupted user sees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from genebench.wording import counted


def results(out: Path) -> list[Path]:
    return [p for p in out.rglob("*.json") if p.name != "model_meta.json"]


def interrupt_then_resume(args: list[str], out: Path, cache: Path, n_tasks: int) -> None:
    """SIGINT `genebench run ARGS --out OUT` after its first result: it exits 130 in one line, keeps finished
    results whole and holds nothing; the rerun probes only the rest and leaves the kept scores untouched."""
    command = [sys.executable, "-m", "genebench.cli", "run", *args, "--out", str(out)]
    env = {**os.environ, "GENEBENCH_CACHE": str(cache)}
    # a shell's background jobs inherit SIGINT ignored; a terminal's Ctrl-C reaches a default handler
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 180
    while not results(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "interrupted; finished results are kept, rerun the same command to resume." in err
    kept = {p: p.read_bytes() for p in results(out)}
    assert 1 <= len(kept) < n_tasks
    assert not list(out.rglob("*.tmp")) and not list(out.rglob(".genebench.lock"))  # nothing half-written or held
    rerun = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{counted(n_tasks - len(kept), 'task')} to score, {len(kept)} already done" in rerun.stderr
    for path, data in kept.items():  # never probed again; rewritten only to complete a lift that waited for the
        before, after = json.loads(data), json.loads(path.read_text())  # controls on a partly covered task's rows
        assert after["scores"] == before["scores"]
        completed = before["lift"] is None and "controls_on_covered_rows" in after["diagnostics"]
        assert path.read_bytes() == data or completed
    assert len(results(out)) == n_tasks
