"""The README's examples, in the order shown, from a fresh clone, as a new user would type them.

Offline examples run for real; each `genebench run` gets `--tasks "HLA class I vs class II"` appended (the one
change made, to keep the test cheap). Examples that need the network (Hub models, submit, live downloads) or
the user's own file must fail fast, in one line. Install and test commands are what the suite itself runs under.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TASK = "HLA class I vs class II"
OFFLINE_INPUTS = {"random", "bag-of-words"}
OFFLINE_MODELS = {"sentence-transformers/all-MiniLM-L6-v2"}
PLACEHOLDERS = ("DIR_or_org", "ORG/NAME", "DIR_OR_HUB_ID")

pytestmark = pytest.mark.slow


def examples(text: str) -> list[tuple[str, str]]:
    """(kind, code) in README order: each shell command, each Python block, each YAML block; the Development
    section (maintainers' commands) is left out."""
    text = text.split("\n## Development")[0]
    found: list[tuple[int, str, str]] = []
    for match in re.finditer(r"```(bash|python|yaml)\n(.*?)```", text, flags=re.S):
        kind, body = match.groups()
        if kind != "bash":
            found.append((match.start(), kind, body))
            continue
        for line in body.splitlines():
            command = line.split("  #")[0].strip()
            if command and not command.startswith("#"):
                found.append((match.start(), "shell", command))
    for match in re.finditer(r"^\|[^\n]*`(genebench run [^`]+)` \|$", text, flags=re.M):  # the model table
        found.append((match.start(), "shell", match.group(1)))
    return [(kind, code) for _, kind, code in sorted(found, key=lambda item: item[0])]


def needs_outside(argv: list[str]) -> bool:
    """Whether a genebench command needs what a fresh clone offline lacks: a remote service (the Hub, NCBI,
    UniProt, Ensembl, source downloads) or the user's own file (`--input precomputed`)."""
    command = argv[1]
    if command in ("submit", "push") or "--from-hub" in argv:
        return True
    if command == "build":
        return "--sources" not in argv
    if command == "run":
        options = dict(zip(argv, argv[1:]))
        if "--config" in options:
            return True  # the README's YAML names a Hub model
        return options.get("--input") not in OFFLINE_INPUTS and options.get("--model") not in OFFLINE_MODELS
    return False


def genebench_commands(line: str) -> list[list[str]]:
    """The genebench commands of a shell line (`pip ... && genebench ...`); pip and pytest are the suite's own."""
    parts = [shlex.split(part) for part in line.split("&&")]
    return [argv for argv in parts if argv and argv[0] == "genebench"]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no fresh clone to run the README in")
    target = tmp_path_factory.mktemp("readme") / "genebench"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True, timeout=120)
    return target


def test_readme_examples_run_in_order_from_a_fresh_clone(clone, tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "GENEBENCH_CACHE": str(tmp_path / "cache")}
    ran: dict[str, int] = {"offline": 0, "online": 0, "python": 0}
    for kind, code in examples(README.read_text(encoding="utf-8")):
        if kind == "yaml":
            (clone / "model.yaml").write_text(code)
            continue
        if kind == "python":
            if any(p in code for p in PLACEHOLDERS):
                continue
            done = subprocess.run([sys.executable, "-c", code], cwd=clone, env=env, capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode == 0, f"README Python example failed:\n{code}\n{done.stderr[-2000:]}"
            ran["python"] += 1
            continue
        for argv in genebench_commands(code):
            online = needs_outside(argv)
            if argv[1] == "run" and not online:
                argv = [*argv, "--tasks", TASK]
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "genebench.cli", *argv[1:]], cwd=clone, env=env,
                                  capture_output=True, text=True, timeout=600)
            seconds = time.perf_counter() - start
            shown = shlex.join(argv)
            if not online:
                assert done.returncode == 0, f"`{shown}` failed:\n{done.stderr[-2000:]}"
                ran["offline"] += 1
                continue
            last = done.stderr.strip().splitlines()[-1]
            assert done.returncode == 2, f"`{shown}` should fail offline: {done.stderr[-2000:]}"
            assert "Traceback" not in done.stderr and last.startswith("genebench ") and ": error: " in last, shown
            assert seconds < 120, f"`{shown}` took {seconds:.0f} s to fail offline"  # no retries (minutes)
            ran["online"] += 1
    assert ran["offline"] >= 6 and ran["online"] >= 6 and ran["python"] >= 2, ran
    assert (clone / "report" / "report.html").is_file() and (clone / "site" / "index.html").is_file()
