"""coverage.answer's routing: which domains a question is about (002: hints first, keyword
scores, the highest scoring category wins; other domains only when the question names them).

Naming words call a domain; context words only weigh in the choice of the main one. A formulary
name probe (a brand or ingredient in the question) runs under the SQL path's timeout.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Literal

from reference_server.retrieval import odb_formulary as formulary
from reference_server.retrieval.dual_path import run_blocking
from reference_server.retrieval.ohip_schedule import codes_in
from reference_server.retrieval.sql import SqlClient
from reference_server.runtime import Runtime

Intent = Literal["billing", "device", "drug"]

# Words that name a domain: a question using one asks about that domain.
NAMING: dict[Intent, re.Pattern[str]] = {
    "billing": re.compile(
        # "code" alone is billing, but not in "Limited Use code" / "LU code" (a drug question).
        r"\b(bill(s|ed|ing|able)?|claim(s|ed)?|fee( code)?s?|(?<!use )(?<!lu )codes?|ohip|"
        r"schedule of benefits|premiums?|tariff)\b",
        re.I,
    ),
    "device": re.compile(
        r"\b(adp|assistive|devices?|walkers?|rollators?|wheel ?chairs?|power chairs?|scooters?|"
        r"cpap|bipap|hearing aids?|mobility aids?|crutch(es)?|orthos[ie]s|prosthe(sis|ses|tic)|"
        r"insulin pumps?|glucose monitor(s|ing)?|cgm|communication aids?|speech generating|"
        r"batter(y|ies)|standing frame|seating|cep)\b",
        re.I,
    ),
    "drug": re.compile(
        r"\b(odb|drugs?|medications?|meds|formulary|prescriptions?|generics?|limited use|"
        r"lu( code)?|statins?|din|interchangeable)\b",
        re.I,
    ),
}
# Words that only lean towards a domain (a visit or a dose comes up in every kind of question):
# they add to the score that picks the main domain but never call a domain on their own.
CONTEXT: dict[Intent, re.Pattern[str]] = {
    "billing": re.compile(
        r"\b(mrp|consult(ation)?s?|assessments?|visits?|house ?calls?|discharged?|admission|"
        r"psychotherapy|counsel(l)?ing|virtual|video|telephone|units?|internist)\b",
        re.I,
    ),
    "device": re.compile(r"\b(mobility|funding|repairs?)\b", re.I),
    "drug": re.compile(r"\b(brand|tablets?|capsules?|doses?|\d+ ?mg|pharmacy)\b", re.I),
}
KEYWORDS: dict[Intent, re.Pattern[str]] = {
    i: re.compile(f"{NAMING[i].pattern}|{CONTEXT[i].pattern}", re.I) for i in NAMING
}
SETTING_WORDS = {"acute": "hospital in-patient", "community": "office", "ltc": "long-term care"}
PROBE_SKIP = re.compile(KEYWORDS["billing"].pattern + "|" + KEYWORDS["device"].pattern, re.I)
SENTENCE = re.compile(r"(?<=[.?!])\s+")


@dataclass
class Intents:
    scores: dict[Intent, float]
    named: set[Intent]
    codes: list[str]
    drug: str | None

    @property
    def ordered(self) -> list[Intent]:
        """The highest scoring domain first (002: it wins); the others only when named."""
        ranked = [i for i, s in sorted(self.scores.items(), key=lambda x: -x[1]) if s > 0]
        return ranked[:1] + [i for i in ranked[1:] if i in self.named]


def drug_named(sql: SqlClient, question: str) -> str | None:
    """A brand or ingredient from the formulary named in the question, as written (names of
    any length: 'Auro-Sitagliptin HCl and Metformin HCl'); billing and device words are not
    names (they are masked, so no name runs across them)."""
    masked = PROBE_SKIP.sub(lambda m: "|" * len(m.group(0)), question)
    return formulary.longest_name(sql, masked)


async def probe_drug(rt: Runtime, question: str) -> str | None:
    """A formulary name in the question, looked up under the SQL path's timeout (it only
    sharpens intent; keywords still decide without it)."""
    try:
        return await asyncio.wait_for(
            run_blocking(lambda: drug_named(rt.ohip_sql, question)),
            timeout=rt.settings.sql_timeout_ms / 1000,
        )
    except Exception:  # timed out or failed: answer without the probe
        return None


async def classify(
    rt: Runtime,
    question: str,
    hint_codes: list[str] | None = None,
    device_hint: bool = False,
    hint_drug: str | None = None,
) -> Intents:
    """Hints first (codes -> billing, device -> device, drug -> drug), then keyword scores; a
    domain is named by a hint, an entity (code, formulary name) or a naming word."""
    scores: dict[Intent, float] = {i: float(len(p.findall(question))) for i, p in KEYWORDS.items()}
    named: set[Intent] = {i for i, p in NAMING.items() if p.search(question)}
    codes = list(dict.fromkeys([*(hint_codes or []), *codes_in(question)]))
    scores["billing"] += 5 * bool(hint_codes) + 2 * bool(codes)
    scores["device"] += 5 * device_hint
    drug = hint_drug if hint_drug is not None else await probe_drug(rt, question)
    scores["drug"] += 5 * bool(hint_drug) + 2 * bool(drug)
    entities: dict[Intent, bool] = {
        "billing": bool(codes),
        "device": device_hint,
        "drug": bool(drug),
    }
    named |= {i for i, present in entities.items() if present}
    return Intents(scores, named, codes, drug)


def domain_text(question: str, intent: Intent, names: list[str] | None = None) -> str:
    """The sentences of the question about one domain (the whole question if none stand out)."""
    wanted = [n.lower() for n in names or [] if n]
    sentences = [
        s
        for s in SENTENCE.split(question.strip())
        if KEYWORDS[intent].search(s) or any(n in s.lower() for n in wanted)
    ]
    return " ".join(sentences) or question
