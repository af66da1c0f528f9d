"""Every run of words of a question as written ('Ratio-Tecnal C1/2', 'Teva-Lisinopril (Type P)'),
trimmed of sentence punctuation, with where it is: the candidates a drug name is looked up among
(`odb_names.name_in`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RUN = re.compile(r"\S+")
LETTER = re.compile("[A-Za-z]")


@dataclass(frozen=True)
class Span:
    """Words of a question, as written, and where they are."""

    text: str
    start: int
    end: int


SPAN_WORDS = 14  # generic names run to 12 words ('soybean oil & medium chain triglycerides & ...')
EDGE = " \t\"'?!.,;:"
END = " \t\"'?!,;:"  # a name can end with '.' ('PMS-Sulfasalazine-E.C.', 'Jamteki I.V.')


def spans(q: str, most: int = SPAN_WORDS) -> list[Span]:
    """Every run of 1..`most` words of `q` as written ('Ratio-Tecnal C1/2', 'Teva-Lisinopril
    (Type P)', 'Drospirenone&Ethinyl Estradiol USP 21'), trimmed of sentence punctuation."""
    words = [(m.start(), m.end()) for m in RUN.finditer(q)]
    out: dict[str, Span] = {}
    for n in range(1, most + 1):
        for i in range(len(words) - n + 1):
            start, end = words[i][0], words[i + n - 1][1]
            text = q[start:end]
            # the edges differ only by '.': without one, END trims as EDGE did
            for edge in (EDGE, END) if "." in text else (EDGE,):
                trimmed = text.strip(edge)
                if trimmed.count("(") < trimmed.count(")"):
                    trimmed = trimmed.rstrip(")").strip(edge)
                if trimmed.count("(") > trimmed.count(")"):
                    trimmed = trimmed.lstrip("(").strip(edge)
                # three letters name brands ('Yaz', '3TC', 'PTU'); shorter runs are words
                if len(trimmed) < 3 or not LETTER.search(trimmed):
                    continue
                offset = start + text.index(trimmed)
                out.setdefault(trimmed.lower(), Span(trimmed, offset, offset + len(trimmed)))
    return list(out.values())
