"""Plain keyword retrieval: a tokenizer with a crude suffix stripper, a small BM25, highlights.

No embeddings and no external index: every collection is a list of short documents scored
in memory with Okapi BM25 (k1 = 1.2, b = 0.75).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

_STOP_TEXT = """a an and are as at be by can could do does for from has have how i if in is it its
    me my of on or our per should so that the their them then there these this to under
    was we what when where which who whom why will with would you your patient patients
    covered cover coverage get much many"""
STOPWORDS = frozenset(_STOP_TEXT.split())

_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def stem(word: str) -> str:
    """A deliberately small suffix stripper: enough to join 'batteries'/'battery',
    'consultations'/'consultation', 'internist'/'internal', not a linguistic stemmer."""
    if len(word) <= 4 or word[0].isdigit():
        return word
    for suffix, keep in (
        ("ies", "y"),
        ("ist", ""),
        ("al", ""),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + keep
    return word


def words(text: str) -> list[str]:
    """Lower-cased word tokens (no stemming, stopwords kept)."""
    return _WORD.findall(text.lower())


def terms(text: str) -> list[str]:
    """Index terms: lower-cased, stopwords dropped, stemmed."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


class BM25:
    """Okapi BM25 over a fixed list of documents (each a string)."""

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75):
        self.k1 = k1
        self.b = b
        self._tf: list[Counter[str]] = [Counter(terms(d)) for d in docs]
        self._len = [sum(tf.values()) for tf in self._tf]
        self._avg = (sum(self._len) / len(self._len)) if self._len else 0.0
        df: Counter[str] = Counter()
        for tf in self._tf:
            df.update(tf.keys())
        n = len(docs)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def __len__(self) -> int:
        return len(self._tf)

    def score(self, query: str | Iterable[str], index: int) -> float:
        q = terms(query) if isinstance(query, str) else list(query)
        tf = self._tf[index]
        norm = self.k1 * (1 - self.b + self.b * self._len[index] / (self._avg or 1.0))
        total = 0.0
        for t in set(q):
            f = tf.get(t)
            if f:
                total += self._idf.get(t, 0.0) * f * (self.k1 + 1) / (f + norm)
        return total

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        """(document index, score) for the k best documents with a positive score."""
        q = terms(query)
        if not q:
            return []
        scored = [(i, self.score(q, i)) for i in range(len(self._tf))]
        scored = [s for s in scored if s[1] > 0]
        scored.sort(key=lambda s: (-s[1], s[0]))
        return scored[:k]


def highlight(text: str, wanted: Sequence[str], limit: int = 5, width: int = 50) -> list[str]:
    """Snippets around each case-insensitive occurrence of a wanted term, the term wrapped in
    ``**``; at most ``limit`` snippets, in the order they occur in the text."""
    spans: list[tuple[int, int]] = []
    for term in wanted:
        needle = term.strip()
        if not needle:
            continue
        for m in re.finditer(re.escape(needle), text, re.IGNORECASE):
            spans.append((m.start(), m.end()))
    spans.sort()
    out: list[str] = []
    last_end = -1
    for start, end in spans:
        if start < last_end:
            continue  # overlapping match of another term
        lo = max(0, start - width)
        hi = min(len(text), end + width)
        snippet = (
            ("…" if lo > 0 else "")
            + text[lo:start]
            + "**"
            + text[start:end]
            + "**"
            + text[end:hi]
            + ("…" if hi < len(text) else "")
        )
        out.append(" ".join(snippet.split()))
        last_end = end
        if len(out) >= limit:
            break
    return out


def money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.2f}"


def unit_price(value: float | None) -> str:
    return "no listed price" if value is None else f"${value:.4f}"
