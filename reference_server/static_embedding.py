"""A static embedding model distilled from the packaged MiniLM: a query costs one tokenizer pass
and a weighted mean of table rows, microseconds instead of milliseconds, and the same bits on
any CPU once the table is written.

Distillation (model2vec's recipe, `distill`, run by the index build): MiniLM embeds every entry
of a vocabulary once, each alone between [CLS] and [SEP] as the model always sees text, mean
pooled as `LocalMiniLM` pools. The vocabulary is the tokenizer's own word pieces plus the whole
words of the corpus that the tokenizer splits into pieces (a drug name, a procedure), so a domain
word keeps the meaning MiniLM gives the whole word instead of a mean of its fragments. The
vectors are centred: the direction every static vector shares is what makes raw token means all
look alike. (model2vec removes it with PCA, whose axes' signs and order a CPU's LAPACK may
choose differently; only the centring is kept here, and the cosine of two vectors is the same
under any rotation.) Each entry is weighted by how rare it is in the corpus (SIF: a / (a + p),
p its share of the corpus's entries), so "the", "of" and "patient" weigh little.

A text is then its words (the tokenizer's pre-tokenisation): a word the table holds whole is one
entry, any other word its pieces. Its vector is the weighted sum of their rows, accumulated in
float64 one row after another in text order (element-wise adds: no reduction whose order a
SIMD kernel could change) and divided by its norm taken with `math.fsum` (correctly rounded),
so a query gives the same float32 vector on every CPU. The table lives in the index directory
(`static_embedding.npz`): the index that was built with it is the only one it can serve.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

TABLE_FILE = "static_embedding.npz"
STATIC_NAME = "static-all-MiniLM-L6-v2-centred"
# the same table refitted on the corpus's sentences (static_fit.py)
FITTED_NAME = "static-all-MiniLM-L6-v2-fitted"
# SIF's a: an entry as common as one in a thousand of the corpus's entries weighs a half
SIF_A = 1e-3
# corpus words kept whole: seen this often, and split by the tokenizer into pieces
MIN_WORD_COUNT = 2
BATCH = 256
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _word_of(pieces: Sequence[str]) -> str:
    """The normalised word a run of word pieces spells ("met", "##form", "##in" -> metformin)."""
    return "".join(p[2:] if p.startswith("##") else p for p in pieces)


def _tokenizer(path: Path, max_tokens: int | None) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    if max_tokens:
        tok.enable_truncation(max_length=max_tokens)
    else:
        tok.no_truncation()
    return tok


def _words(encoding: Any) -> list[tuple[str, list[int]]]:
    """(word, its piece ids) of one encoding, in text order, special tokens left out."""
    out: list[tuple[str, list[int]]] = []
    last: int | None = None
    pieces: list[str] = []
    ids: list[int] = []
    for token, piece, word in zip(encoding.tokens, encoding.ids, encoding.word_ids, strict=True):
        if word is None:
            continue
        if word != last:
            if ids:
                out.append((_word_of(pieces), ids))
            pieces, ids, last = [], [], word
        pieces.append(token)
        ids.append(piece)
    if ids:
        out.append((_word_of(pieces), ids))
    return out


class StaticEmbedder:
    """The distilled table, embedding texts as weighted means of its rows."""

    def __init__(self, table: Path, tokenizer: Path, max_tokens: int | None = None) -> None:
        with np.load(table, allow_pickle=False) as data:
            self.vectors: np.ndarray = data["vectors"]
            self.weights: np.ndarray = data["weights"]
            self.piece_rows: np.ndarray = data["piece_rows"]
            words = [str(w) for w in data["words"]]
            word_rows = [int(r) for r in data["word_rows"]]
            meta = json.loads(str(data["meta"]))
        self.word_rows = dict(zip(words, word_rows, strict=True))
        self._piece_rows: list[int] = self.piece_rows.tolist()
        self.name = str(meta["name"])
        self.dimension = int(self.vectors.shape[1])
        self._tokenizer_path = tokenizer
        self._tok = _tokenizer(tokenizer, max_tokens)

    def set_max_tokens(self, max_tokens: int) -> None:
        """Read at most this many tokens of a text (index builds cap long documents)."""
        self._tok = _tokenizer(self._tokenizer_path, max_tokens)

    def rows(self, text: str) -> list[int]:
        """The table rows a text is made of, in text order."""
        out: list[int] = []
        for word, ids in _words(self._tok.encode(text)):
            whole = self.word_rows.get(word)
            if whole is not None:
                out.append(whole)
            else:
                out.extend(r for r in (self._piece_rows[i] for i in ids) if r >= 0)
        return out

    def embed_one(self, text: str) -> np.ndarray:
        rows = self.rows(text)
        if not rows:
            return np.zeros(self.dimension, dtype=np.float32)
        weighted = self.weights[rows][:, None] * self.vectors[rows].astype(np.float64)
        # summed over axis 0 of a C-ordered array: numpy adds row after row into one
        # accumulator, each element's sum in text order whatever SIMD width the CPU has
        acc = weighted.sum(axis=0)
        norm = math.sqrt(math.fsum((acc * acc).tolist()))
        return (acc / norm if norm > 0 else acc).astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.embed_one(t) for t in texts])


def table_path(index_dir: Path) -> Path:
    return index_dir / TABLE_FILE


def distill(
    model: Any,
    tokenizer: Path,
    corpus_texts: Iterable[str],
    out: Path,
    name: str,
    refit: bool = False,
) -> dict[str, Any]:
    """Write the static table distilled from `model` (a `LocalMiniLM`) over the tokenizer's
    pieces and the corpus's split words, and with `refit` its rows refitted on the corpus's
    sentences (static_fit.py); the table's description returned."""
    tok = _tokenizer(tokenizer, None)
    vocab: dict[str, int] = tok.get_vocab()
    pieces = sorted(
        (i, p) for p, i in vocab.items() if p not in SPECIAL and not p.startswith("[unused")
    )
    texts = list(corpus_texts)
    encodings = tok.encode_batch(texts)
    counts: Counter[str] = Counter()
    for enc in encodings:
        counts.update(word for word, ids in _words(enc) if len(ids) > 1)
    words = sorted(w for w, n in counts.items() if n >= MIN_WORD_COUNT)
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    sequences = [[cls_id, i, sep_id] for i, _ in pieces]
    sequences += [[cls_id, *tok.encode(w, add_special_tokens=False).ids, sep_id] for w in words]
    raw = np.concatenate(
        [model.embed_ids(sequences[s : s + BATCH]) for s in range(0, len(sequences), BATCH)]
    ).astype(np.float64)
    centred = raw - raw.mean(axis=0)  # the mean over axis 0 adds row after row, on any CPU
    vectors = centred.astype(np.float32)
    piece_rows = np.full(len(vocab), -1, dtype=np.int32)
    for row, (piece_id, _) in enumerate(pieces):
        piece_rows[piece_id] = row
    word_rows = np.arange(len(pieces), len(pieces) + len(words), dtype=np.int32)
    weights = _sif_weights(
        encodings, piece_rows, dict(zip(words, word_rows.tolist(), strict=True)), len(sequences)
    )
    meta = {
        "name": name,
        "dimension": int(vectors.shape[1]),
        "pieces": len(pieces),
        "words": len(words),
        "texts": len(texts),
        "sif_a": SIF_A,
    }
    _write(out, vectors, weights, piece_rows, words, word_rows, meta)
    if refit:
        from reference_server.static_fit import fragments, refine

        sample = fragments(texts)
        rows_of = StaticEmbedder(out, tokenizer).rows
        targets = np.concatenate(
            [model.embed(sample[s : s + BATCH]) for s in range(0, len(sample), BATCH)]
        )
        vectors = refine(vectors, weights, rows_of, sample, targets)
        meta["fitted_fragments"] = len(sample)
        _write(out, vectors, weights, piece_rows, words, word_rows, meta)
    return meta


def _write(
    out: Path,
    vectors: np.ndarray,
    weights: np.ndarray,
    piece_rows: np.ndarray,
    words: list[str],
    word_rows: np.ndarray,
    meta: dict[str, Any],
) -> None:
    np.savez(
        out,
        vectors=vectors,
        weights=weights,
        piece_rows=piece_rows,
        words=np.array(words, dtype=str),
        word_rows=word_rows,
        meta=np.array(json.dumps(meta)),
    )


def _sif_weights(
    encodings: Sequence[Any], piece_rows: np.ndarray, word_rows: dict[str, int], n: int
) -> np.ndarray:
    """a / (a + p) per row, p the row's share of the corpus's entries (as texts are split)."""
    seen = np.zeros(n, dtype=np.float64)
    for enc in encodings:
        for word, ids in _words(enc):
            whole = word_rows.get(word)
            if whole is not None:
                seen[whole] += 1
            else:
                for r in piece_rows[ids]:
                    if r >= 0:
                        seen[r] += 1
    share = seen / max(1.0, seen.sum())
    weights: np.ndarray = SIF_A / (SIF_A + share)
    return weights
