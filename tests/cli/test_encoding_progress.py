"""The encoding bar moves batch by batch on a terminal, long before the first cache chunk is written."""

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

from tiny_models import save_tiny_bert

SCRIPT = """
import sys
from genebench.symbols import read_hgnc
from model_adapters.cache import CachedEncoder
from model_adapters.description import DescriptionAdapter

hgnc = read_hgnc(sys.argv[1])
adapter = DescriptionAdapter(sys.argv[2], hgnc=hgnc, source="hgnc", runtime="torch",
                             batch_size=8)
genes, chunk = list(hgnc["symbol"]), 200
print(sum(adapter.encoding_cost(adapter.encoding_order(genes)[:chunk])), flush=True)
CachedEncoder(adapter, cache_dir=sys.argv[3], chunk_size=chunk).encode(genes)
"""

BAR = re.compile(r"([^\r\n|]*?): *\d+%\|[^|]*\| *(\d+)/(\d+) \[")


def _on_a_terminal(args: list[str], tmp_path: Path) -> tuple[str, str]:
    """stdout, and what the script drew on a pseudo-terminal as its stderr (tqdm redrawing on every update)."""
    env = {**os.environ, "TQDM_MININTERVAL": "0"}
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 150, 0, 0))  # a terminal 150 columns wide
    child = subprocess.Popen([sys.executable, "-c", SCRIPT, *args], stdout=subprocess.PIPE, stderr=follower,
                             env=env, cwd=tmp_path)
    os.close(follower)
    drawn = bytearray()
    while True:
        try:
            piece = os.read(leader, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not piece:
            break
        drawn += piece
    os.close(leader)
    out = child.stdout.read().decode()
    assert child.wait(timeout=300) == 0, drawn.decode(errors="replace")[-3000:]
    return out, drawn.decode(errors="replace")


def test_the_bar_moves_before_the_first_chunk_is_encoded(hgnc_file, tmp_path):
    model = save_tiny_bert(tmp_path / "bert")
    out, drawn = _on_a_terminal([str(hgnc_file), str(model), str(tmp_path / "cache")], tmp_path)
    first_chunk = int(out.split()[0])
    draws = [(desc.strip(), int(n), int(total)) for desc, n, total in BAR.findall(drawn)]
    assert draws and {desc for desc, _, _ in draws} == {f"encoding with {model}"}  # one bar, no inner one
    counts = [n for _, n, _ in draws]
    assert any(0 < n < first_chunk for n in counts), counts  # moved within the first chunk, batch by batch
    assert counts == sorted(counts) and counts[-1] == draws[-1][2] > first_chunk  # never back, and it ends full
