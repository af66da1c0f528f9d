"""The static embedding model: a text is the weighted sum of its words' rows (a word the table
holds whole is one row, any other word its pieces), divided by its norm; the rows are the table's,
so the expected vectors here are computed by hand from a small described table, never from a
model run on this machine. Distillation is checked on a described stand-in for MiniLM."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from reference_server import static_embedding as se
from reference_server.embedding_model import packaged_files

TOKENIZER = packaged_files()[1]


def _vocab() -> dict[str, int]:
    from tokenizers import Tokenizer

    vocab: dict[str, int] = Tokenizer.from_file(str(TOKENIZER)).get_vocab()
    return vocab


def _table(tmp_path: Path, rows: dict[str, tuple[list[float], float]], words: list[str]) -> Path:
    """A table whose rows are the given pieces (by their text) and whole words, in that order."""
    vocab = _vocab()
    names = list(rows)
    piece_rows = np.full(len(vocab), -1, dtype=np.int32)
    for row, name in enumerate(names):
        if name not in words:
            piece_rows[vocab[name]] = row
    path = tmp_path / se.TABLE_FILE
    np.savez(
        path,
        vectors=np.array([rows[n][0] for n in names], dtype=np.float32),
        weights=np.array([rows[n][1] for n in names], dtype=np.float64),
        piece_rows=piece_rows,
        words=np.array(words, dtype=str),
        word_rows=np.array([names.index(w) for w in words], dtype=np.int32),
        meta=np.array(json.dumps({"name": "described"})),
    )
    return path


def test_a_text_is_the_weighted_sum_of_its_rows_over_its_norm(tmp_path: Path) -> None:
    """ "metformin dose": metformin is held whole (row [3, 0], weight 1), "dose" is a piece
    ([0, 4], weight 0.5): sum [3, 2], norm sqrt(13)."""
    table = _table(
        tmp_path,
        {"metformin": ([3.0, 0.0], 1.0), "dose": ([0.0, 4.0], 0.5)},
        words=["metformin"],
    )
    model = se.StaticEmbedder(table, TOKENIZER)
    assert model.name == "described" and model.dimension == 2
    vector = model.embed(["Metformin dose"])[0]
    assert vector.dtype == np.float32
    assert vector.tolist() == pytest.approx([3 / math.sqrt(13), 2 / math.sqrt(13)], abs=1e-7)


def test_a_word_the_table_does_not_hold_whole_is_its_pieces(tmp_path: Path) -> None:
    """Without "metformin" whole, the word is its pieces met + ##form + ##in; a piece the table
    lacks adds nothing; a text of nothing known is the zero vector."""
    table = _table(
        tmp_path,
        {"met": ([1.0, 0.0], 1.0), "##form": ([0.0, 1.0], 1.0), "##in": ([1.0, 1.0], 2.0)},
        words=[],
    )
    model = se.StaticEmbedder(table, TOKENIZER)
    assert model.rows("metformin") == [0, 1, 2]
    # 1*[1,0] + 1*[0,1] + 2*[1,1] = [3, 3]
    assert model.embed(["metformin"])[0].tolist() == pytest.approx([0.70710677, 0.70710677])
    assert model.embed(["zzzz qqqq"])[0].tolist() == [0.0, 0.0]


def test_the_vector_does_not_depend_on_how_many_texts_come_together(tmp_path: Path) -> None:
    table = _table(tmp_path, {"dose": ([0.25, 4.0], 0.5), "renal": ([1.5, -2.0], 0.75)}, words=[])
    model = se.StaticEmbedder(table, TOKENIZER)
    alone = [model.embed([t])[0].tobytes() for t in ("renal dose", "dose", "renal")]
    together = [v.tobytes() for v in model.embed(["renal dose", "dose", "renal"])]
    assert alone == together


class DescribedMiniLM:
    """Stands in for MiniLM: a sequence's vector is [number of ids, first piece id, 1, 0]."""

    def embed_ids(self, sequences: list[list[int]]) -> np.ndarray:
        return np.array([[len(s), s[1], 1.0, 0.0] for s in sequences], dtype=np.float32)


def test_distillation_keeps_pieces_and_the_corpus_words_split_into_pieces(tmp_path: Path) -> None:
    texts = ["metformin and metformin", "the dose of metformin", "rare onceword"]
    meta = se.distill(DescribedMiniLM(), TOKENIZER, texts, tmp_path / se.TABLE_FILE, "described")
    model = se.StaticEmbedder(tmp_path / se.TABLE_FILE, TOKENIZER)
    # "metformin" is split by the tokenizer and seen 3 times: kept whole; "onceword" once: not
    assert "metformin" in model.word_rows and "onceword" not in model.word_rows
    assert meta["words"] == len(model.word_rows) and model.dimension == 4
    assert meta["pieces"] == sum(1 for r in model.piece_rows if r >= 0)
    # SIF: a row seen in the corpus weighs less than one never seen
    seen = model.weights[model.word_rows["metformin"]]
    unseen = model.weights[model.piece_rows[_vocab()["zebra"]]]
    assert seen < unseen == 1.0
