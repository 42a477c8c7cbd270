"""Each control's feature function: (data, tasks, settings, seed) -> the tasks' scores with held-out predictions.

A control that reads vectors encodes every gene its tasks need and is probed like any model (`probed`); the
identity control fits gene indicators of pairs with scikit-learn.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse

from genebench.embeddings import GeneEmbeddings
from genebench.genes import task_genes
from genebench.metrics import classification_scores
from genebench.model_info import ModelInfo
from genebench.probe.engine import TaskScores, is_ordered_pair, iter_task_scores, main_score_for, summarise_folds
from genebench.probe.validation import check_labels
from genebench.results import Coverage
from genebench.tasks.task import Task

if TYPE_CHECKING:
    from genebench.data import BenchmarkData
    from genebench.probe.settings import ProbeSettings

def probed(encoder: Any, data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings) -> Iterator[TaskScores]:
    """`tasks` probed on `encoder`'s vectors of their genes (and their partners'), as a model would be."""
    from genebench.partners import partner_embeddings

    embeddings = encoder.encode(task_genes(tasks))
    partners = partner_embeddings(tasks, embeddings, data, encoder)
    return iter_task_scores(tasks, embeddings, settings, partner_embeddings=partners)


# -- name ---------------------------------------------------------------------------------------------------------

NAME_WORDS = 2048
"""Word and word-pair features of the symbol and approved name (the most frequent over all HGNC genes)."""
NAME_CHARACTERS = 1024
"""Character 2- to 4-gram features of the symbol, previous symbols and aliases."""
NAME_SENTENCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""The sentence encoder that reads "Gene symbol <symbol> full name <name>" (NumPy runtime, float32: the same vectors
on every machine, with or without torch)."""


class NameFeatures:
    """What a gene's names say, fitted on every gene of the HGNC table (so a gene's vector does not depend on the
    genes asked for): binary words and word pairs of "<symbol> <approved name>" with its previous symbols and aliases
    as words, binary character 2- to 4-grams of the symbol, previous symbols and aliases (a family's stem: "ZNF",
    "SLC", "HLA-"), and, when `sentences` is given, its vector of "Gene symbol <symbol> full name <name>" (what the
    words mean, not only which they are).

    Args:
        hgnc: the HGNC table.
        sentences: an encoder of the genes' HGNC descriptions (`names` uses `NAME_SENTENCE_MODEL`), or None.

    Examples:
        >>> hgnc = pd.DataFrame({"symbol": ["ZNF1", "ZNF2", "KRT1"], "name": ["zinc finger 1", "zinc finger 2",
        ...                      "keratin 1"], "prev_symbol": ["", "", ""], "alias_symbol": ["", "", "K1"]})
        >>> vectors = NameFeatures(hgnc).encode(["ZNF1", "ZNF2"]).vectors
        >>> bool((vectors[0] == vectors[1]).sum() > 0), vectors.shape[0]
        (True, 2)
    """

    def __init__(self, hgnc: pd.DataFrame, sentences: Any | None = None) -> None:
        self.hgnc = hgnc
        self.sentences = sentences

    @cached_property
    def meta(self) -> ModelInfo:
        """The control's record."""
        model = self.sentences.meta.keyed().cache_key if self.sentences is not None else None
        return ModelInfo(id="control/name", revision="words+symbol-character-ngrams+sentences", input="bag-of-words",
                         pooling="counts", settings={"words": NAME_WORDS, "characters": NAME_CHARACTERS,
                                                     "sentences": model})

    @cached_property
    def _fitted(self) -> tuple[Any, Any, dict[str, int]]:
        from sklearn.feature_extraction.text import CountVectorizer

        words, symbols = self._texts(self.hgnc)
        word_reader = CountVectorizer(ngram_range=(1, 2), max_features=NAME_WORDS, min_df=2, binary=True,
                                      token_pattern=r"(?u)\b[\w-]+\b").fit(words)
        char_reader = CountVectorizer(analyzer="char_wb", ngram_range=(2, 4), max_features=NAME_CHARACTERS,
                                      min_df=2, binary=True, lowercase=False).fit(symbols)
        return word_reader, char_reader, {symbol: row for row, symbol in enumerate(self.hgnc["symbol"])}

    @staticmethod
    def _texts(table: pd.DataFrame) -> tuple[list[str], list[str]]:
        """Per gene: its words ("<symbol> <name> <previous symbols> <aliases>") and its symbols, space-separated."""
        others = (table["prev_symbol"].fillna("").astype(str) + "|" + table["alias_symbol"].fillna("").astype(str))
        others = others.str.replace("|", " ", regex=False).str.strip()
        symbols = (table["symbol"].astype(str) + " " + others).str.strip()
        return (symbols + " " + table["name"].fillna("").astype(str)).tolist(), symbols.tolist()

    def encode(self, symbols: Sequence[str]) -> GeneEmbeddings:
        """The name features, shape (n_genes, n_features); symbols not in the HGNC table (or that the sentence
        encoder cannot read) are missing."""
        word_reader, char_reader, row_of = self._fitted
        known = [s for s in dict.fromkeys(symbols) if s in row_of]
        missing = {"unknown_symbol": [s for s in dict.fromkeys(symbols) if s not in row_of]}
        parts = []
        if self.sentences is not None:
            read = self.sentences.encode(known)
            missing |= read.missing
            known, parts = list(read.symbols), [read.vectors]
        words, chars = self._texts(self.hgnc.iloc[[row_of[s] for s in known]])
        counts = scipy.sparse.hstack([word_reader.transform(words), char_reader.transform(chars)]).toarray()
        vectors = np.hstack([counts.astype(np.float32), *parts])
        return GeneEmbeddings(known, vectors, missing={k: v for k, v in missing.items() if v},
                              model=self.meta.model_copy(update={"dim": vectors.shape[1]}))


def names(data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings, seed: int) -> Iterator[TaskScores]:
    """The name control: the tasks probed on `NameFeatures`, its sentence vectors through the embedding cache."""
    from genebench.inputs import CACHE, get_adapter, load_target

    hgnc = data.hgnc()
    sentences = get_adapter("description", NAME_SENTENCE_MODEL, hgnc=hgnc, source="hgnc", runtime="numpy",
                            dtype="float32")
    return probed(NameFeatures(hgnc, load_target(CACHE)(sentences)), data, tasks, settings)


# -- random -------------------------------------------------------------------------------------------------------

def random_vectors(data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings, seed: int
                   ) -> Iterator[TaskScores]:
    """The random control: the tasks probed on seeded random vectors of `RANDOM_DIM` dimensions (`RandomAdapter`)."""
    from genebench.controls.table import RANDOM_DIM
    from genebench.inputs import get_adapter

    return probed(get_adapter("random", "control/random", hgnc=data.hgnc(), dim=RANDOM_DIM, seed=seed), data, tasks,
                  settings)


# -- identity -----------------------------------------------------------------------------------------------------

def identity(data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings, seed: int) -> Iterator[TaskScores]:
    """The identity control: each binary pair task scored from gene indicators alone (`identity_scores`)."""
    return (identity_scores(task, settings) for task in tasks)


def identity_scores(task: Task, settings: ProbeSettings) -> TaskScores:
    """Score a binary pair task from gene indicators alone: one indicator per gene, the pair's row holding 1/2 at
    each of its two genes (PerturbQA's ordered pairs: one indicator block per side), fitted with the probe's L2
    logistic objective by scikit-learn. It measures each gene's propensity to be labelled positive, learnt from
    the training pairs it appears in.

    Args:
        task: a binary task over (gene, partner) pairs.
        settings: its C, tol and max_iter are the probe's.

    Returns:
        The task's scores and held-out probabilities, every row covered.
    """
    from sklearn.linear_model import LogisticRegression

    start = time.perf_counter()
    X = _indicators(task.entities, ordered=is_ordered_pair(task))
    labels, folds = np.asarray(task.labels), np.asarray(task.fold_ids)
    n = len(labels)
    result = TaskScores(task=task, main_score=main_score_for(task), coverage=Coverage(n_covered=n, n_task=n,
                                                                                       fraction=1.0))
    result.skipped = check_labels(task.metadata.type, labels, folds, min_covered=settings.min_covered)
    if result.skipped is None:
        readout = np.asarray(task.entities[:, 1], dtype=str) if is_ordered_pair(task) else None
        per_fold, n_iter = [], []
        held_out = np.full(n, np.nan)
        for fold in range(int(folds.max()) + 1):
            train, test = folds != fold, folds == fold
            probe = LogisticRegression(C=settings.C, tol=settings.tol, max_iter=settings.max_iter)
            probe.fit(X[train], labels[train])
            n_iter.append(int(probe.n_iter_[0]))
            held_out[test] = probe.predict_proba(X[test])[:, 1]
            per_fold.append(classification_scores(labels[test], held_out[test], task_type=task.metadata.type,
                                                  groups=None if readout is None else readout[test]))
        scores = summarise_folds(per_fold)
        if np.isfinite(scores[result.main_score].mean):
            result.scores = scores
            result.held_out, result.rows = held_out, np.arange(n)
            result.diagnostics = {"solver": "scikit-learn lbfgs on sparse gene indicators",
                                  "n_features": X.shape[1], "n_iter_max": max(n_iter)}
        else:
            result.skipped = f"{result.main_score} is undefined: no held-out group has both classes"
    result.seconds = time.perf_counter() - start
    return result


def _indicators(entities: np.ndarray, *, ordered: bool) -> scipy.sparse.csr_matrix:
    """Sparse pair rows, shape (n_pairs, n_entities): 1/2 at each gene ("mean"), or one block per side."""
    entities = np.asarray(entities, dtype=str)
    n = len(entities)
    if ordered:
        _, first = np.unique(entities[:, 0], return_inverse=True)
        _, second = np.unique(entities[:, 1], return_inverse=True)
        columns, value, width = np.stack([first, second + first.max() + 1], axis=1), 1.0, first.max() + second.max() + 2
    else:
        unique, codes = np.unique(entities, return_inverse=True)
        columns, value, width = codes.reshape(n, 2), 0.5, len(unique)
    matrix = scipy.sparse.csr_matrix((np.full(2 * n, value), (np.repeat(np.arange(n), 2), columns.ravel())),
                                     shape=(n, int(width)))
    matrix.sum_duplicates()  # a gene paired with itself: one indicator of 1
    return matrix
