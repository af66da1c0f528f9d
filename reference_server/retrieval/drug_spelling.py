"""Drug names as typed, read as the listed names they misspell.

Prescribers type 'amoxicilin', 'metforman', 'atorvastatine', 'ozempik': no listed name, so
odb.get would answer nothing. A word that names no drug is compared with the listed brand names
and ingredient keys by how it sounds (doubled letters, 'ph'/'f', hard 'c'/'k', 'y'/'i', a
final 'e' set aside) and by edits that count a swap of neighbours as one: within one edit for
names of up to eight letters, two above. The correction is used only when it is unambiguous:
when the nearest names belong to different ingredients, nothing is read.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rapidfuzz import process
from rapidfuzz.distance import OSA

SHORTEST = 5  # shorter words are too close to too many names to correct
# Words of ODB questions that are no drug's name (a brand may sit one letter away: 'BeneFIX').
QUESTION_WORDS = frozenset(
    re.findall(
        r"[a-z]+",
        """
        about after again also benefit benefits brand brands cheap cheaper cheapest check
        coverage covered covers could drug drugs formulary funded generic generics listed lowest
        needs ontario other patient patients please price prescribe prescription program should senior
        seniors still strength strengths tablet tablets their there these under which while
        would capsules injection cream ointment patch drops solution liquid
        """,
    )
)
WORD = re.compile(r"[A-Za-z][A-Za-z\-]*[A-Za-z]")


def sound_key(word: str) -> str:
    """How a name sounds, roughly: 'Amoxicillin' and 'amoxicilin', 'Ozempic' and 'ozempik',
    'phenytoin' and 'fenytoin', 'atorvastatin' and 'atorvastatine' share a key."""
    w = word.lower()
    w = re.sub(r"ph", "f", w)
    w = re.sub(r"ck", "k", w)
    w = re.sub(r"c(?![eiy])", "k", w)
    w = w.replace("x", "ks").replace("y", "i").replace("z", "s")
    w = re.sub(r"(.)\1+", r"\1", w)
    return w[:-1] if len(w) > 4 and w.endswith("e") else w


def _buckets(
    names: Iterable[str], key: Callable[[str], str]
) -> dict[str, tuple[list[str], list[str]]]:
    """first letter of key(name) -> (names, their keys), in name order."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    for name in sorted(names):
        k = key(name)
        names_, keys = out.setdefault(k[:1], ([], []))
        names_.append(name)
        keys.append(k)
    return out


def allowed_edits(word: str) -> int:
    return 1 if len(word) <= 8 else 2


@dataclass(frozen=True)
class Correction:
    """`written` (at start..end of the text) read as the listed `name`."""

    written: str
    name: str
    start: int
    end: int
    edits: int


class SpellingIndex:
    """Listed names by the first letter of their sound key, with the ingredients each names."""

    def __init__(self, names: Iterable[tuple[str, str]]) -> None:
        ingredients: dict[str, set[str]] = defaultdict(set)
        for name, ingredient in names:
            if name and len(name) >= SHORTEST and WORD.fullmatch(name):
                ingredients[name.lower()].add(ingredient)
        self.ingredients = {n: frozenset(i) for n, i in ingredients.items()}
        # names by their first letter and by their sound key's ('phenytoin' under p and f)
        self.by_letter = _buckets(self.ingredients, lambda n: n)
        self.by_sound = _buckets(self.ingredients, sound_key)

    def correct(self, word: str) -> tuple[str, int] | None:
        """The listed name `word` misspells and the edits apart (as written or as it sounds,
        whichever is fewer); None when no name is near or the nearest names belong to
        different ingredients."""
        lower = word.lower()
        if len(lower) < SHORTEST or lower in QUESTION_WORDS or lower in self.ingredients:
            return None
        limit = allowed_edits(lower)
        distance: dict[str, int] = {}
        for query, (names, keys) in (
            (lower, self.by_letter.get(lower[:1], ([], []))),
            (sound_key(lower), self.by_sound.get(sound_key(lower)[:1], ([], []))),
        ):
            for _, d, i in process.extract(
                query, keys, scorer=OSA.distance, score_cutoff=limit, limit=None
            ):
                distance[names[i]] = min(d, distance.get(names[i], d))
        if not distance:
            return None
        best = min(distance.values())
        tied = sorted(n for n, d in distance.items() if d == best)
        if len({self.ingredients[n] for n in tied}) > 1:
            return None
        return min(tied, key=lambda n: (OSA.distance(lower, n), n)), best

    def in_text(self, text: str) -> Correction | None:
        """The one word of `text` that misspells a listed name (the closest, relative to its
        length); None when none does or two words misspell different drugs equally."""
        found: list[tuple[float, Correction]] = []
        for m in WORD.finditer(text):
            corrected = self.correct(m.group(0))
            if corrected:
                name, edits = corrected
                found.append((edits / len(name), Correction(m.group(0), name, *m.span(), edits)))
        if not found:
            return None
        found.sort(key=lambda f: (f[0], f[1].start))
        (score, best), rest = found[0], found[1:]
        if (
            rest
            and rest[0][0] == score
            and self.ingredients[rest[0][1].name] != self.ingredients[best.name]
        ):
            return None
        return best
