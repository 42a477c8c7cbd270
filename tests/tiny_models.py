"""Tiny, randomly initialised transformers models, saved with `save_pretrained` so they load like Hub models."""

from __future__ import annotations

from pathlib import Path


def tiny_bert_config(vocab_size: int, **extra):
    """A 2-layer BERT config with 16-dimensional hidden states."""
    from transformers import BertConfig

    return BertConfig(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=64, **extra)


def save_tiny_bert(path: Path) -> Path:
    """A 2-layer BERT with a character-level WordPiece vocabulary (covers every gene symbol), saved in `path`."""
    import torch
    from transformers import BertModel, BertTokenizer

    chars = list("abcdefghijklmnopqrstuvwxyz0123456789-")
    words = ["gene", "symbol", "full", "name", "with", "the", "summary", "tumor", "protein"]
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, *chars, *[f"##{c}" for c in chars]]
    vocab = {token: i for i, token in enumerate(tokens)}
    torch.manual_seed(0)
    BertModel(tiny_bert_config(len(vocab))).save_pretrained(path)
    BertTokenizer(vocab=vocab, model_max_length=64).save_pretrained(path)
    return path
