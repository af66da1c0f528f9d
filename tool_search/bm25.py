"""BM25 over a tool's fields (name, title, description, argument names, argument
descriptions), each field with its own length normalisation and weight, summed (BM25F-like).

Postings are numpy arrays of per-(term, tool) impacts computed once, so a query adds one
array per term and field: the cost grows with the query, not with a per-tool loop.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from tool_search.ranking_config import DEFAULT_FIELD_WEIGHTS, RankingConfig, expanded_name
from tool_search.records import ToolRecord
from tool_search.text import split_name, terms

K1 = 1.2
B = 0.75
# A word in the tool's name says more about what it does than one in an argument's description.
FIELD_WEIGHTS = DEFAULT_FIELD_WEIGHTS


def field_texts(tool: ToolRecord, expand_names: bool = False) -> dict[str, str]:
    params = tool.parameters
    name = (
        expanded_name(tool.name, tool.title or "", tool.description)
        if expand_names
        else split_name(tool.name)
    )
    return {
        "name": name,
        "title": tool.title or "",
        "description": tool.description,
        "argument_names": " ".join(split_name(p.name) for p in params),
        "argument_descriptions": " ".join(p.description for p in params),
    }


@dataclass
class _Postings:
    rows: np.ndarray
    impacts: np.ndarray


class FieldBM25:
    """The keyword index of a catalogue."""

    def __init__(self, tools: list[ToolRecord], config: RankingConfig | None = None):
        config = config or RankingConfig()
        weights = config.field_weights
        self.size = len(tools)
        self.field_terms: list[dict[str, set[str]]] = []
        self._postings: dict[str, dict[str, _Postings]] = {}
        per_field: dict[str, list[Counter[str]]] = {f: [] for f in FIELD_WEIGHTS}
        for tool in tools:
            texts = field_texts(tool, config.expand_names)
            counts = {f: Counter(terms(texts[f])) for f in FIELD_WEIGHTS}
            for f in FIELD_WEIGHTS:
                per_field[f].append(counts[f])
            self.field_terms.append({f: set(counts[f]) for f in FIELD_WEIGHTS})
        for f, docs in per_field.items():
            lengths = np.array([sum(c.values()) for c in docs], dtype=np.float64)
            avg = float(lengths.mean()) if len(docs) and lengths.mean() > 0 else 1.0
            rows: dict[str, list[int]] = defaultdict(list)
            tfs: dict[str, list[int]] = defaultdict(list)
            for i, doc in enumerate(docs):
                for term, count in doc.items():
                    rows[term].append(i)
                    tfs[term].append(count)
            postings = {}
            for term, ids in rows.items():
                idx = np.array(ids, dtype=np.int64)
                freq = np.array(tfs[term], dtype=np.float64)
                df = len(ids)
                idf = math.log(1 + (self.size - df + 0.5) / (df + 0.5))
                norm = K1 * (1 - B + B * lengths[idx] / avg)
                postings[term] = _Postings(idx, weights[f] * idf * freq * (K1 + 1) / (freq + norm))
            self._postings[f] = postings

    def scores(self, query: str) -> np.ndarray:
        """One score per tool (0 where no query term occurs)."""
        out = np.zeros(self.size, dtype=np.float64)
        for term in set(terms(query)):
            for postings in self._postings.values():
                hit = postings.get(term)
                if hit is not None:
                    out[hit.rows] += hit.impacts
        return out

    def matched_fields(self, row: int, query: str) -> dict[str, list[str]]:
        """Which of the tool's fields hold which query terms (the 'why it matched')."""
        wanted = set(terms(query))
        found = {f: sorted(wanted & have) for f, have in self.field_terms[row].items()}
        return {f: hits for f, hits in found.items() if hits}
