"""Public keys: the facts any backend can state, read from whatever spelling it uses.

A check or a relevance judgment written against one backend's ids would judge that backend's
vocabulary, not the fact. These parsers turn an id or a locator into the public key it names,
in one canonical spelling, so that two backends that cite the same thing match:

| key | canonical | read from, for example |
|---|---|---|
| ADP manual section | ``adp:<manual>:<section>`` | ``adp:mobility:Section 705``, ``Mobility Devices Manual, section 705``, ``ADP mobility s. 705.01`` |
| DIN | ``din:<8 digits>`` | ``02443937``, ``DIN 02443937``, ``odb:02443937`` (8 digits alone, or beside "DIN" / "ODB") |
| LU code | ``lu:<digits>`` | ``LU code 431``, ``LU 431`` |
| OHIP fee code | ``fee:<code>`` | ``A007``, ``fee code A007A``, ``ohip:A007`` (the code alone, or beside "OHIP" / "fee" / "schedule"; the suffix letter is dropped) |
| official URL | ``url:<host><path>`` | ``https://www.cpso.on.ca/en/Policy/X/`` (scheme, ``www.``, case of the host, query, fragment and trailing slash dropped) |
| a section of an official document | ``section:<host><path>#<heading words>`` | ``https://www.cpso.on.ca/en/Policy/X § Informed Consent`` (the document's URL and the section's own heading; case and punctuation of the heading dropped) |

The ADP manuals are named as the Assistive Devices Program publishes them (ontario.ca,
"Assistive Devices Program" policy and administration manuals); a manual is recognised by a
word of its title. Text that names no public key keeps its own spelling (``None`` here), so a
backend's private ids still match themselves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

# Manual slug -> words of the published manual titles that name it (first match wins, so the
# more specific titles come first: maxillofacial prosthetics before limb prosthetics).
ADP_MANUALS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("maxillofacial", ("maxillofacial",)),
    ("comm_aids", ("comm_aids", "communication")),
    ("glucose_monitoring", ("glucose_monitoring", "glucose")),
    ("insulin_pump", ("insulin_pump", "insulin")),
    ("hearing_devices", ("hearing_devices", "hearing")),
    ("visual_aids", ("visual_aids", "visual")),
    ("respiratory", ("respiratory",)),
    ("mobility", ("mobility", "wheelchair")),
    ("grants", ("grants", "grant")),
    ("prosthesis", ("prosthesis", "prosthetic", "limb")),
    ("core_manual", ("core_manual", "policies and procedures", "policy and procedures")),
)
_SECTION = re.compile(
    r"(?:\bsection|\bsec\.?|\bs\.|§)\s*(\d{3}(?:\.\d{2})?)\b|(?<![\d.])(\d{3}\.\d{2})(?![\d.])",
    re.IGNORECASE,
)
# the whole locator: a chunk of a section (`adp:mobility:310-2`) is a corpus's own id, not the key
_ADP_SLUG = re.compile(r"^adp:([a-z_]+):(?:section\s*)?(\d{3}(?:\.\d{2})?)$", re.IGNORECASE)
_DIN = re.compile(r"(?<!\d)(\d{8})(?!\d)")
_LU = re.compile(r"\bLU(?:\s*code)?\s*#?\s*(\d{2,4})\b", re.IGNORECASE)
_FEE = re.compile(r"(?<![A-Za-z0-9])([A-Z]\d{3})[A-Z]?(?![A-Za-z0-9])")
# an 8-digit number or a letter and three digits is a DIN or a fee code only where the text says so
# (a date or another register's id can have the same shape)
_DIN_WORDS = re.compile(r"\b(din|odb)\b", re.IGNORECASE)
_FEE_WORDS = re.compile(r"\b(ohip|fee|fee code|schedule)\b", re.IGNORECASE)
_ADP_WORDS = re.compile(r"\b(adp|assistive devices)\b", re.IGNORECASE)


def _adp_manual(text: str) -> str | None:
    folded = text.casefold()
    for slug, words in ADP_MANUALS:
        if any(word in folded for word in words):
            return slug
    return None


def adp_section(text: str) -> str | None:
    """``adp:<manual>:<section>`` for a locator naming an ADP manual and a section number."""
    slug = _ADP_SLUG.match(text.strip())
    if slug:
        manual = _adp_manual(slug.group(1))
        return f"adp:{manual or slug.group(1).casefold()}:{slug.group(2)}"
    if text.strip().casefold().startswith("adp:"):
        return None  # another id of a corpus of ADP text (a chunk, a funding row): its own
    section = _SECTION.search(text)
    manual = _adp_manual(text)
    if section and manual and (_ADP_WORDS.search(text) or "manual" in text.casefold()):
        return f"adp:{manual}:{section.group(1) or section.group(2)}"
    return None


def official_url(text: str) -> str | None:
    """``url:<host><path>`` for an http(s) URL: the same page however it is spelt."""
    stripped = text.strip()
    if not re.match(r"^https?://", stripped, re.IGNORECASE):
        return None
    parts = urlsplit(stripped)
    host = parts.netloc.casefold().removeprefix("www.")
    path = parts.path.rstrip("/")
    return f"url:{host}{path}"


SECTION_SIGN = "§"


def document_section(text: str) -> str | None:
    """``section:<host><path>#<heading words>`` for ``"<official URL> § <heading>"``."""
    if SECTION_SIGN not in text:
        return None
    url, _, heading = text.partition(SECTION_SIGN)
    document = official_url(url)
    words = " ".join(re.findall(r"\w+", heading.casefold()))
    if document is None or not words:
        return None
    return f"section:{document.removeprefix('url:')}#{words}"


def public_key(text: object) -> str | None:
    """The public key ``text`` names, canonically spelt, or None when it names none."""
    if not isinstance(text, str) or not text.strip():
        return None
    section = document_section(text)
    if section is not None:
        return section
    for parse in (official_url, adp_section):
        found = parse(text)
        if found:
            return found
    lu = _LU.search(text)
    if lu:
        return f"lu:{int(lu.group(1))}"
    din = _DIN.search(text)
    if din and (text.strip() == din.group(1) or _DIN_WORDS.search(text)):
        return f"din:{din.group(1)}"
    fee = _FEE.search(text)
    if fee and (_FEE.fullmatch(text.strip()) or _FEE_WORDS.search(text)):
        return f"fee:{fee.group(1)}"
    return None


def canonical(text: str) -> str:
    """The public key, or the text itself when it names none (a backend's own id)."""
    return public_key(text) or text


def only_private_ids(retrieved: Sequence[str], relevant: Mapping[str, int]) -> bool:
    """True when every judgment names a public key and no retrieved id does: the backend ranks
    by ids of its own, so its ranking cannot be judged (not measured, rather than scored 0)."""
    return (
        bool(retrieved)
        and bool(relevant)
        and all(public_key(doc) for doc in relevant)
        and not any(public_key(doc) for doc in retrieved)
    )


def public_judgments(relevant: Mapping[str, int]) -> dict[str, int]:
    """Judgments keyed by the public key each id names (evals/run/public_keys.py), so a backend
    that cites the same manual section, DIN or fee code in its own spelling is judged alike."""
    out: dict[str, int] = {}
    for doc, grade in relevant.items():
        key = canonical(doc)
        out[key] = max(grade, out.get(key, grade))
    return out


def public_ranking(ids: Sequence[str]) -> list[str]:
    """Retrieved ids by public key, first occurrence kept (rank is position)."""
    seen: dict[str, None] = {}
    for doc in ids:
        seen.setdefault(canonical(doc), None)
    return list(seen)
