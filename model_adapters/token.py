"""Token input: models in which genes are tokens, or any model fed the symbol string.

- Gene vocabularies: Geneformer's token dictionary maps Ensembl ids to token ids; scGPT-style vocabularies
  map symbols; a user may pass any mapping. The gene's vector is the model's input-embedding row.
  The dictionary is found in the model's folder or repo (`token_dictionary*.pkl`), read from the
  tokenizer's vocabulary when that is keyed by genes, or passed as `vocabulary`. Pickles are read with
  `genebench.safe_pickle.safe_load`, never `pickle.load`.
- Any other model: the symbol string's own tokens, with their input embeddings averaged
  (pooling "input"), or the last hidden state pooled ("mean" over the symbol's tokens, or "cls").
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from genebench.embeddings import GeneEmbeddings
from genebench.errors import SourceFormatError
from genebench.model_info import ModelInfo
from genebench.safe_pickle import safe_load
from genebench.symbols import SymbolMapper
from model_adapters.base import (
    NOT_IN_VOCABULARY,
    UNKNOWN_SYMBOL,
    AdapterError,
    file_version,
    make_embeddings,
    split_known,
)
from model_adapters.hf import HFEncoder, dtype_name

logger = logging.getLogger(__name__)

ENSEMBL_GENE = re.compile(r"^ENSG\d{11}(\.\d+)?$")
POOLINGS = ("input", "mean", "cls")
_DICTIONARY_GLOB = "token_dictionary*.pkl"


def read_vocabulary(path: str | Path) -> dict[str, int]:
    """A gene -> token-id mapping from a pickle (restricted unpickler), JSON or two-column CSV/TSV."""
    path = Path(path)
    if path.suffix in (".pkl", ".pickle"):
        with open(path, "rb") as handle:
            mapping = safe_load(handle)
    elif path.suffix == ".json":
        mapping = json.loads(path.read_text())
    else:
        frame = pd.read_csv(path, sep="\t" if path.suffix in (".tsv", ".txt") else ",", dtype=str,
                            keep_default_na=False)
        mapping = dict(zip(frame.iloc[:, 0], frame.iloc[:, 1])) if frame.shape[1] >= 2 else None
    if not isinstance(mapping, Mapping):
        raise SourceFormatError(
            f"vocabulary '{path}': expected a mapping gene -> token id (dict pickle, JSON object or two-column "
            f"CSV), found {type(mapping).__name__}; pass the model's token dictionary."
        )
    try:
        return {str(key): int(value) for key, value in mapping.items()}
    except (TypeError, ValueError) as exc:
        raise SourceFormatError(f"vocabulary '{path}': expected integer token ids ({exc}).") from exc


class TokenAdapter:
    """Gene vectors from a model's token embeddings.

    Args:
        model: Hub id or local folder.
        hgnc: the HGNC table, for symbol -> Ensembl id and symbol normalisation.
        vocabulary: a gene -> token-id mapping or its file; None looks for the model's token dictionary,
            then a gene-keyed tokenizer vocabulary, then falls back to the symbol string's tokens.
        pooling: for symbol strings: "input" (mean input embedding of its tokens), "mean" or "cls" of
            the last hidden state. Gene vocabularies always use the input-embedding row.
        revision, trust_remote_code, device, dtype, batch_size: see `model_adapters.hf.HFEncoder`.
    """

    def __init__(
        self,
        model: str,
        *,
        hgnc: pd.DataFrame,
        vocabulary: str | Path | Mapping[str, int] | None = None,
        pooling: str = "input",
        revision: str | None = None,
        trust_remote_code: bool = False,
        device: str | None = None,
        dtype: str = "auto",
        batch_size: int = 64,
    ) -> None:
        if pooling not in POOLINGS:
            raise AdapterError(f"token pooling '{pooling}': expected one of {list(POOLINGS)}; pass --pooling input.")
        self.model = model
        self.hgnc = hgnc
        self.vocabulary = vocabulary
        self.pooling = pooling
        self.encoder = HFEncoder(model, revision=revision, trust_remote_code=trust_remote_code, device=device,
                                 dtype=dtype, batch_size=batch_size)

    @cached_property
    def _gene_vocabulary(self) -> tuple[dict[str, int] | None, str]:
        """(current symbol -> token id, where it came from), or (None, "symbol-string")."""
        raw, origin = self._find_vocabulary()
        if raw is None:
            return None, "symbol-string"
        n_ensembl = sum(bool(ENSEMBL_GENE.match(k)) for k in raw)
        if n_ensembl >= len(raw) / 2:
            by_ensembl = {e.split(".")[0]: s for s, e in zip(self.hgnc["symbol"], self.hgnc["ensembl_gene_id"]) if e}
            mapped = {by_ensembl[k.split(".")[0]]: v for k, v in raw.items() if k.split(".")[0] in by_ensembl}
            logger.info("token vocabulary %s: %d Ensembl ids, %d map to current HGNC symbols", origin, n_ensembl,
                        len(mapped))
            return mapped, f"{origin} (ensembl)"
        mapped, report, _ = SymbolMapper(self.hgnc).rekey(raw.items())
        logger.info("token vocabulary %s: %d of %d keys map to current HGNC symbols (%d renamed)", origin,
                    len(mapped), len(raw), len(report.renamed))
        return mapped, f"{origin} (symbol)"

    def _find_vocabulary(self) -> tuple[dict[str, int] | None, str]:
        if isinstance(self.vocabulary, Mapping):
            return {str(k): int(v) for k, v in self.vocabulary.items()}, "user mapping"
        if self.vocabulary is not None:
            return read_vocabulary(self.vocabulary), file_version(self.vocabulary)
        path, revision = self.encoder.location
        candidates: list[Path] = []
        if Path(path).is_dir():
            candidates = sorted(Path(path).rglob(_DICTIONARY_GLOB))
        else:
            from huggingface_hub import hf_hub_download, list_repo_files

            try:
                names = [f for f in list_repo_files(path, revision=revision) if Path(f).match(_DICTIONARY_GLOB)]
                candidates = [Path(hf_hub_download(path, name, revision=revision)) for name in names]
            except Exception as exc:  # offline or unreachable: fall back to the tokenizer's vocabulary
                logger.warning("cannot list the files of '%s' to find its token dictionary (%s); pass --vocabulary "
                               "if the model has one", path, exc)
        n_rows = self.encoder.model.get_input_embeddings().weight.shape[0]
        for candidate in candidates:
            mapping = read_vocabulary(candidate)
            if mapping and max(mapping.values()) < n_rows:
                return mapping, file_version(candidate)
        vocab = self.encoder.tokenizer.get_vocab()
        approved = set(self.hgnc["symbol"].tolist())
        n_genes = sum(bool(ENSEMBL_GENE.match(k)) or k in approved for k in vocab)
        if n_genes >= len(vocab) / 2:
            return dict(vocab), "tokenizer vocabulary"
        return None, "symbol-string"

    @cached_property
    def meta(self) -> ModelInfo:
        """Model, revision, pooling, precision and vocabulary origin (looking it up loads the model).

        The precision is the weights' for embedding-row lookups, the forward pass's for hidden-state pooling.
        """
        mapping, origin = self._gene_vocabulary
        lookup = mapping is not None or self.pooling == "input"
        precision = self.encoder.weights_dtype if lookup else self.encoder.torch_dtype
        return ModelInfo(id=self.model, revision=self.encoder.location[1], input="token",
                           pooling="input" if mapping is not None else self.pooling,
                           trust_remote_code=self.encoder.trust_remote_code,
                           settings={"vocabulary": origin, "dtype": dtype_name(precision)})

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """Vectors for genes the model can represent; genes outside a gene vocabulary are reported missing."""
        known, unknown = split_known(symbols, self.hgnc)
        mapping, _ = self._gene_vocabulary
        if mapping is not None:
            table = self.encoder.input_embeddings
            bad = {s: mapping[s] for s in known if s in mapping and not 0 <= mapping[s] < len(table)}
            if bad:
                raise AdapterError(
                    f"token vocabulary of '{self.model}': token ids {sorted(bad.values())[:5]} (genes "
                    f"{list(bad)[:5]}) are outside the model's {len(table)} embeddings; pass the token dictionary "
                    "that belongs to this model (--vocabulary)."
                )
            genes = [s for s in known if s in mapping]
            vectors = table[[mapping[s] for s in genes]] if genes else np.zeros((0, table.shape[1]))
            absent = [s for s in known if s not in mapping]
            return make_embeddings(self.meta, genes, vectors, {UNKNOWN_SYMBOL: unknown, NOT_IN_VOCABULARY: absent},
                                   n_parameters=self.encoder.n_parameters)
        if self.pooling == "input":
            vectors = self._mean_input_embeddings(known)
        else:
            vectors = self.encoder.encode_texts(known, pooling=self.pooling, skip_special=self.pooling == "mean")
        return make_embeddings(self.meta, known, vectors, {UNKNOWN_SYMBOL: unknown},
                               n_parameters=self.encoder.n_parameters, **self.encoder.notes)

    def _mean_input_embeddings(self, symbols: list[str]) -> np.ndarray:
        table = self.encoder.input_embeddings
        ids, special = self.encoder.tokenize(symbols)
        rows = []
        for gene_ids, mask in zip(ids, special):
            core = [i for i, s in zip(gene_ids, mask) if not s] or list(gene_ids)
            rows.append(table[core].mean(0))
        return np.asarray(rows, dtype=np.float32).reshape(len(symbols), table.shape[1])
