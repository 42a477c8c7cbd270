"""Feedback where the work is: progress lines off a terminal, and how well descriptions cover the genes."""

from __future__ import annotations

import json
import logging
import time

from genebench.cli import main
from genebench.progress import LogProgress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_progress_is_one_line_a_minute_with_rate_and_eta(caplog) -> None:
    caplog.set_level(logging.INFO, logger="genebench.progress")
    clock = Clock()
    counter = LogProgress(19_913, "encoding with m", "gene", clock=clock, heartbeat=False)
    for _ in range(20):  # 20 chunks of 1000 genes, 10 s apart: 200 s in all
        clock.now += 10
        counter.update(1000)
    counter.close()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4  # at 60, 120 and 180 s, then the final line
    assert lines[0] == "encoding with m: 6000 of 19913 genes (30.1%), 100.0 genes/s, 1 min 0 s elapsed, ETA 2 min 19 s"
    assert lines[-1].startswith("encoding with m: 20000 of 19913 genes") and "ETA" not in lines[-1]


def test_a_long_step_without_updates_still_logs_once_per_interval(caplog) -> None:
    caplog.set_level(logging.INFO, logger="genebench.progress")
    with LogProgress(100, "probing", "task", interval=0.2) as counter:
        counter.update(10)
        time.sleep(0.75)  # one slow step: the timer speaks for it
    lines = [r.getMessage() for r in caplog.records]
    assert 3 <= len(lines) <= 5 and all(line.startswith("probing: 10 of 100 tasks (10.0%)") for line in lines)


def test_a_description_source_covering_few_genes_warns_and_is_recorded(tmp_path, capsys, caplog) -> None:
    descriptions = tmp_path / "descriptions.csv"
    descriptions.write_text('symbol,description\nHLA-A,"major histocompatibility complex, class I, A"\n'
                            'HLA-DRA,"major histocompatibility complex, class II, DR alpha"\n')
    out = tmp_path / "out"
    assert main(["run", "--input", "bag-of-words", "--description-source", "csv", "--descriptions",
                 str(descriptions), "--tasks", "HLA class I vs class II", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "descriptions: 2 full (4.5%), 42 name only (95.5%), 0 missing (0.0%)" in printed
    assert "description source 'csv' describes only 2 of 44 genes in full (4.5%)" in caplog.text
    result = json.loads(next(out.glob("*/*/HLA*.json")).read_text())
    assert result["model"]["notes"]["descriptions"] == {"full": 2, "name_only": 42, "missing": 0}
