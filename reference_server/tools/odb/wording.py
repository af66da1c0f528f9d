"""The formulary's wording for odb.get: its edition and source name, coverage and LU criteria in
words, and the context snippets of an answer."""

from __future__ import annotations

import json
import re

from reference_server.config import CORPUS_DIR
from reference_server.retrieval.derived import PROCESS
from reference_server.retrieval.odb_formulary import LuCode, Product
from reference_server.retrieval.vector import VectorHit


def edition() -> str:
    return PROCESS.get("odb_edition", _edition)


def _edition() -> str:
    """The formulary extract date, for citations (corpus MANIFEST, read once)."""
    try:
        manifest = json.loads((CORPUS_DIR / "off" / "MANIFEST.json").read_text(encoding="utf-8"))
        return str(manifest["files"]["odb_drugs.csv"]["create_date"])
    except (OSError, KeyError, ValueError):
        return ""


def formulary_source() -> str:
    return f"Ontario Drug Benefit Formulary (extract {edition()})" if edition() else "ODB Formulary"


def is_brand(r: Product) -> bool:
    """Heuristic: a product named without its ingredient is the brand (Januvia vs PMS-Sitagliptin)."""
    first = (r.ingredient or "").split(" ")[0]
    return bool(first) and first not in (r.brand_name or "").lower()


def coverage_status(lu: bool, benefit: bool) -> str:
    return "Limited Use benefit" if lu else ("general benefit" if benefit else "not a benefit")


def lu_text(lu: list[LuCode], condition: str | None) -> str | None:
    """'LU 665, 666: <indication> (authorization period: indefinite)', condition matches first."""
    if not lu:
        return None
    words = [w for w in re.findall(r"[a-z0-9]+", (condition or "").lower()) if len(w) > 3]
    groups: dict[tuple[str, str], list[str]] = {}
    for r in lu:
        groups.setdefault((r.indication, r.period or "not stated"), []).append(r.lu_code)
    items = sorted(groups.items(), key=lambda kv: not any(w in kv[0][0].lower() for w in words))
    text = "; ".join(
        f"LU {', '.join(codes)}: {ind} (authorization period: {period})"
        for (ind, period), codes in items
    )
    if words and not any(w in ind.lower() for (ind, _), _ in items for w in words):
        text += f". No LU indication mentions '{condition}'."
    return text


def no_lu(p: Product) -> str | None:
    if p.is_benefit and not p.lu_required:
        return "No Limited Use code required: general benefit in the formulary."
    return None


def snippets(hits: list[VectorHit], hybrid: bool) -> list[str]:
    """Hybrid: 3 snippets x 500 chars; vector-only: 5 x 800. Group chunks are kept whole."""
    n, size = (3, 500) if hybrid else (5, 800)
    out = []
    for h in hits[:n]:
        text = h.text
        if h.metadata.get("doc_type") != "group" and len(text) > size:
            text = text[:size].rstrip() + "..."
        out.append(text)
    return out
