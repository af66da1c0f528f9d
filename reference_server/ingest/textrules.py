"""Rule-based rewording shared by the Dr. OFF ingesters.

The official files carry prose (Limited Use criteria, fee conditions, manual text) that the
corpus may not copy. Everything prose-like that we commit goes through these rules, which
re-express it as a terse clinical note and then *guarantee* that no run of 8 or more
consecutive words from the source survives (`break_runs`). The rules, in order:

1. lead-ins are rewritten as short labels ("For the treatment of ..." -> "Tx: ...",
   "For patients who/with ..." -> "Pts: ...");
2. common clinical abbreviations replace long forms (patients -> pts, with -> w/,
   maximum -> max, greater than or equal to -> >=, ...);
3. articles and copulas are dropped ("the", "a", "is", "are", ...);
4. the result is cut to a word budget;
5. any window of 8 source words still intact loses a filler word or gets an abbreviation;
   if neither is possible the note is cut short there (marked '…'), so that no content
   word is silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

RUN_LIMIT = 8  # a shared run of this many consecutive words counts as copying

# n-gram windows of the whole source file being ingested (see `guarding`)
_GUARD: ContextVar[frozenset[tuple[str, ...]]] = ContextVar("_GUARD", default=frozenset())


@contextmanager
def guarding(texts: Iterable[str | None]) -> Iterator[None]:
    """Inside this block every rewording also avoids 8-word runs of *all* `texts` (the whole
    source file), not only of the text being summarised: the same sentence often recurs."""
    token = _GUARD.set(frozenset(corpus_ngrams(texts)))
    try:
        yield
    finally:
        _GUARD.reset(token)


_WORD = re.compile(r"[a-z0-9]+")

# Lead-in phrases -> short labels (rule 1). Matched case-insensitively at the start.
LEAD_INS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?:for|in)\s+the\s+(?:treatment|management)\s+of\s+", re.I), "Tx: "),
    (re.compile(r"^(?:for|in)\s+the\s+(?:prevention|prophylaxis)\s+of\s+", re.I), "Prevention: "),
    (re.compile(r"^(?:for|in)\s+the\s+(?:reduction|reducing)\s+of\s+", re.I), "Reduce: "),
    (re.compile(r"^for\s+reducing\s+", re.I), "Reduce: "),
    (re.compile(r"^for\s+(?:the\s+)?use\s+(?:in|as)\s+", re.I), "Use: "),
    (re.compile(r"^for\s+(?:adult\s+)?patients\s+(?:who|with|that)\s+", re.I), "Pts: "),
    (re.compile(r"^for\s+(?:adult\s+)?patients\s+", re.I), "Pts: "),
    (re.compile(r"^(?:adult\s+)?patients\s+(?:who|with)\s+", re.I), "Pts: "),
    (re.compile(r"^for\s+", re.I), ""),
]

# Abbreviations (rule 2). Longest phrases first; applied on word boundaries.
ABBREVIATIONS: list[tuple[str, str]] = [
    ("greater than or equal to", ">="),
    ("less than or equal to", "<="),
    ("greater than", ">"),
    ("less than", "<"),
    ("at least", ">="),
    ("more than", ">"),
    ("a minimum of", "min"),
    ("a maximum of", "max"),
    ("minimum", "min"),
    ("maximum", "max"),
    ("patients", "pts"),
    ("patient's", "pt's"),
    ("patient’s", "pt's"),
    ("patient", "pt"),
    ("treatment", "tx"),
    ("diagnosis", "dx"),
    ("history", "hx"),
    ("without", "w/o"),
    ("with", "w/"),
    ("and/or", "/"),
    ("and", "&"),
    ("or", "/"),
    ("months", "mo"),
    ("month", "mo"),
    ("weeks", "wk"),
    ("week", "wk"),
    ("years", "y"),
    ("year", "y"),
    ("minutes", "min"),
    ("hours", "h"),
    ("physician", "MD"),
    ("physicians", "MDs"),
    ("approximately", "~"),
    ("including", "incl."),
    ("previously", "prior"),
    ("documented", "doc'd"),
    ("inadequate", "poor"),
    ("intolerance", "intol."),
    ("contraindication", "CI"),
    ("contraindications", "CIs"),
    ("eligible for payment", "payable"),
]
_ABBR = [(re.compile(rf"(?<![\w/]){re.escape(a)}(?![\w/])", re.I), b) for a, b in ABBREVIATIONS]

DROP_ALWAYS = {"the", "a", "an", "is", "are", "which", "that", "who"}
FILLERS = [
    "of",
    "to",
    "for",
    "in",
    "on",
    "at",
    "by",
    "as",
    "from",
    "their",
    "its",
    "has",
    "have",
    "this",
    "these",
    "those",
    "such",
    "any",
    "also",
    "may",
    "must",
    "will",
    "where",
    "when",
]
NUMBER_WORDS = {  # number words -> digits (reword; ohip.find_limits adds 'once')
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "twelve": "12",
}


def norm_words(text: str) -> list[str]:
    """Lower-case alphanumeric tokens: the unit in which copying is measured."""
    return _WORD.findall((text or "").lower())


def source_ngrams(source: str, n: int = RUN_LIMIT) -> set[tuple[str, ...]]:
    toks = norm_words(source)
    return {tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)}


# one-word swaps that keep the meaning (tried before any word is dropped)
SWAPS = {
    "and": "&",
    "or": "/",
    "with": "w/",
    "without": "w/o",
    "patient": "pt",
    "patients": "pts",
    "physician": "MD",
    "physicians": "MDs",
    "maximum": "max",
    "minimum": "min",
    "additional": "addl",
    "number": "no.",
    "treatment": "tx",
    "assessment": "assmt",
    "hospital": "hosp",
    "consultation": "consult",
    "procedure": "proc",
    "department": "dept",
    "emergency": "emerg",
    "service": "svc",
    "services": "svcs",
    "month": "mo",
    "months": "mo",
    "year": "yr",
    "years": "yrs",
    "hours": "h",
    "minutes": "min",
    "including": "incl.",
    "approximately": "~",
    "per": "/",
}


def break_runs(text: str, source: str | set[tuple[str, ...]], limit: int = RUN_LIMIT) -> str:
    """Change as few words as needed so that no `limit`-word window of `source` survives:
    first drop an article, else swap a word for its abbreviation, else drop a filler word,
    else end the text just before the window's last word (marked with '…')."""
    grams = source if isinstance(source, set) else source_ngrams(source, limit)
    active = _GUARD.get()
    if active and limit == RUN_LIMIT:
        grams = grams | active
    words = text.split()
    if not grams:
        return text
    for _ in range(3 * len(words) + 1):
        flat: list[tuple[str, int]] = []
        for idx, w in enumerate(words):
            flat.extend((t, idx) for t in norm_words(w))
        hit = None
        for i in range(len(flat) - limit + 1):
            if tuple(t for t, _ in flat[i : i + limit]) in grams:
                hit = flat[i : i + limit]
                break
        if hit is None:
            break
        window = sorted({idx for _, idx in hit})
        bare = {idx: words[idx].lower().strip(",.;:()") for idx in window}
        done = False
        for idx in reversed(window):  # 1. articles
            if bare[idx] in ("the", "a", "an"):
                del words[idx]
                done = True
                break
        if not done:  # 2. abbreviation swap (keeps meaning)
            for idx in reversed(window):
                if bare[idx] in SWAPS:
                    w = words[idx]
                    lead = w[: len(w) - len(w.lstrip("(,"))]
                    trail = w[len(w.rstrip(",.;:)")) :]
                    repl = SWAPS[bare[idx]]
                    if w.lstrip("(,")[:1].isupper():
                        repl = repl[:1].upper() + repl[1:]
                    words[idx] = lead + repl + trail
                    done = True
                    break
        if not done:  # 3. filler words
            for filler in FILLERS:
                for idx in reversed(window):
                    if bare[idx] == filler:
                        del words[idx]
                        done = True
                        break
                if done:
                    break
        if not done:  # 4. no safe edit: cut the text before the window's last word
            # (dropping a content word could change the meaning; a shorter note cannot)
            words = words[: window[-1]]
            if words:
                words[-1] = words[-1].rstrip(",;:") + " …"
    return " ".join(words)


def _first_clause(text: str) -> str:
    para = re.split(r"\n\s*\n", (text or "").strip(), maxsplit=1)[0]
    para = re.sub(r"\s+", " ", para)
    para = re.sub(
        r"\b(i\.e|e\.g|vs|approx|etc)\.", lambda m: m.group(1).replace(".", ""), para, flags=re.I
    )
    clause = re.split(r"(?<=[a-z0-9\)])[.;:](?:\s|$)", para, maxsplit=1)[0]
    return clause.strip(" .;:,*")


def reword(text: str) -> str:
    """Rules 1-3: lead-in labels, abbreviations, dropped articles/copulas."""
    out = re.sub(r"\s+", " ", (text or "")).strip()
    for pat, label in LEAD_INS:
        new = pat.sub(label, out, count=1)
        if new != out:
            out = new
            break
    for pat, repl in _ABBR:
        out = pat.sub(repl, out)
    words = []
    for w in out.split():
        bare = w.lower().strip(",.;:()")
        if bare in DROP_ALWAYS:
            continue
        words.append(NUMBER_WORDS.get(w.lower(), w))
    return " ".join(words)


Grams = set[tuple[str, ...]]


def summarise(
    text: str, max_words: int = 20, first_clause: bool = True, guard: Grams | None = None
) -> str:
    """Short own-words note for a piece of source prose (all five rules). `guard` adds the
    8-word windows of other source texts (e.g. the whole file) that must not survive either."""
    if not text or not text.strip():
        return ""
    base = _first_clause(text) if first_clause else re.sub(r"\s+", " ", text).strip()
    out = reword(base)
    words = out.split()
    if len(words) > max_words:
        out = " ".join(words[:max_words]).rstrip(",;:") + " …"
    out = break_runs(out, source_ngrams(text) | (guard or set()))
    return out.strip()


def keep_label(
    text: str, source: str | None = None, max_words: int = 24, guard: Grams | None = None
) -> str:
    """Keep a short official label (a name or title) as is; longer ones are shortened
    only as much as needed so that no 8-word run of the source text survives."""
    text = re.sub(r"\s+", " ", (text or "")).strip()
    words = text.split()
    if len(words) > max_words:
        text = " ".join(words[:max_words]).rstrip(",;:") + " …"
    if len(norm_words(text)) < RUN_LIMIT:
        return text
    return break_runs(
        text, source_ngrams(source if source is not None else text) | (guard or set())
    )


def corpus_ngrams(texts: Iterable[str | None], n: int = RUN_LIMIT) -> Grams:
    """All `n`-word windows of many source texts: the guard for a whole source file."""
    out: Grams = set()
    for t in texts:
        if t:
            out |= source_ngrams(t, n)
    return out
