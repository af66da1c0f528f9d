"""Which other tools also answer a routing case, from the tools' specifications (seeds 000 and
002), never from what a ranking returns. Each rule names the sentence of the spec it rests on,
and a case records the rules that gave its acceptable set.

- seed 002, coverage.answer: "Main orchestrator tool that routes clinical questions to
  appropriate domain tools" (schedule.get, adp.get, odb.get), with request hints `codes`,
  `device` and `drug` naming the domain: a domain tool's question is also answered by
  coverage.answer, and a coverage.answer question about exactly one domain by that domain's tool.
- seed 000, opa.search_sections: "Semantic search across all OPA knowledge sources", filtered by
  `source_org` cpso / ontario_health / cep / pho / moh; policy_check is "CPSO-specific",
  ipac_guidance "PHO infection prevention and control guidance", clinical_tools "CEP clinical
  decision support tools", program_lookup "Ontario Health clinical programs": a specialised
  tool's question is also answered by the general search, and a general search confined to one
  organisation's documents by that organisation's tool.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ocm_common.json_types import Arguments

ORCHESTRATOR = "coverage.answer"
GENERAL_SEARCH = "opa.search_sections"
DOMAIN_OF_HINT = {"codes": "schedule.get", "device": "adp.get", "drug": "odb.get"}
DOMAIN_TOOLS = tuple(DOMAIN_OF_HINT.values())
# golden tags and derived family suffixes that name a coverage.answer question's one domain
DOMAIN_OF_WORD = {
    "billing": "schedule.get",
    "device": "adp.get",
    "drug": "odb.get",
    "odb": "odb.get",
}
ORG_TOOL = {
    "cpso": "opa.policy_check",
    "pho": "opa.ipac_guidance",
    "cep": "opa.clinical_tools",
    "ontario_health": "opa.program_lookup",
}
SPECIALISED_TOOLS = tuple(ORG_TOOL.values())
# document ids start with their organisation (reference_server/corpus/FORMAT.md)
_DOC_ORG = re.compile(r"\b(cpso|pho|cep|ontario-health|moh)-[a-z0-9]")

SEED002_COVERAGE = "seed 002 coverage.answer routes domain questions to schedule/adp/odb"
SEED000_SEARCH = "seed 000 search_sections searches all OPA sources (source_org)"


def _one(values: set[str]) -> str | None:
    return next(iter(values)) if len(values) == 1 else None


def coverage_domain(args: Arguments, words: list[str]) -> str | None:
    """The one domain tool a coverage.answer question is about: its hints, else the words
    (golden tags, derived family) that name a domain; None for none or several."""
    hints = args.get("hints") or {}
    if isinstance(hints, dict) and hints:
        return _one({DOMAIN_OF_HINT[k] for k in hints if k in DOMAIN_OF_HINT})
    if "multi-domain" in words:
        return None
    return _one({DOMAIN_OF_WORD[w] for w in words if w in DOMAIN_OF_WORD})


def search_org(args: Arguments, documents: Any, words: list[str]) -> str | None:
    """The one organisation a general search is confined to: its `source_org` filter, else
    the documents its expectations name, else the golden tags naming an organisation."""
    org = args.get("source_org")
    if isinstance(org, str) and org:
        return org
    found = {m.replace("-", "_") for m in _DOC_ORG.findall(json.dumps(documents, default=str))}
    if found:
        return _one(found)
    return _one({w for w in words if w in ORG_TOOL or w == "moh"})


def alternatives(
    tool: str, args: Arguments, documents: Any, words: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(other tools that answer the case, the rules that said so)."""
    if tool in DOMAIN_TOOLS:
        return (ORCHESTRATOR,), (SEED002_COVERAGE,)
    if tool == ORCHESTRATOR:
        domain = coverage_domain(args, words)
        return ((domain,), (SEED002_COVERAGE + " (hints/domain)",)) if domain else ((), ())
    if tool in SPECIALISED_TOOLS:
        return (GENERAL_SEARCH,), (SEED000_SEARCH,)
    if tool == GENERAL_SEARCH:
        specialised = ORG_TOOL.get(search_org(args, documents, words) or "")
        return (
            ((specialised,), (SEED000_SEARCH + " (one organisation)",)) if specialised else ((), ())
        )
    return (), ()


def is_validation_only(expect: list[Any]) -> bool:
    """A scenario whose every expectation is a tool error tests argument checking: no tool
    answers it, so it is not a routing case."""
    checks = [
        getattr(e, "check", None) or (e.get("check") if isinstance(e, dict) else None)
        for e in expect
    ]
    return bool(checks) and all(c == "tool_error" for c in checks)
