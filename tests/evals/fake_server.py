"""A tiny MCP server with three of the twelve tool names, for harness tests.

Not the reference server: a few hard-coded records so every expected value in the tests is
known by construction. ``FAKE_BREAK`` (environment, or ``build_server(broken=...)``) turns it
into a deliberately broken backend:

- ``schema``: opa.search_sections returns a result that violates its outputSchema;
- ``error``: schedule.get returns a tool error for every call;
- ``rank``: opa.search_sections returns the best section second;
- ``value``: odb.get reports the drug as not covered;
- ``contract``: opa.search_sections publishes a changed outputSchema (``score`` a string,
  ``total_matches`` removed, ``confidence`` no longer required) and a new required argument;
- ``missing``: odb.get is not published at all.

Run over stdio with ``python tests/evals/fake_server.py`` (``--http PORT`` for HTTP).
"""

from __future__ import annotations

import os
import re
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from pydantic import BaseModel

SECTIONS: list[dict[str, str]] = [
    {
        "section_id": "cpso-virtual-care:s01",
        "document_id": "cpso-virtual-care",
        "source_org": "cpso",
        "text": "Virtual care is the practice of medicine; the same standard of care applies.",
    },
    {
        "section_id": "cpso-virtual-care:s02",
        "document_id": "cpso-virtual-care",
        "source_org": "cpso",
        "text": "Document virtual care encounters and consent in the medical record.",
    },
    {
        "section_id": "pho-reprocessing:s03",
        "document_id": "pho-reprocessing",
        "source_org": "pho",
        "text": "Reprocessing of instruments: clean, then disinfect or sterilize before reuse.",
    },
    {
        "section_id": "cep-dementia:s01",
        "document_id": "cep-dementia",
        "source_org": "cep",
        "text": "Dementia assessment algorithm with MoCA and Mini-Cog screening tools.",
    },
]

FEES: dict[str, dict[str, Any]] = {
    "A007": {"code": "A007", "description": "Intermediate assessment", "fee": 37.95},
    "K013": {"code": "K013", "description": "Counselling, individual care", "fee": 64.15},
}

DRUGS: dict[str, dict[str, Any]] = {
    "02443937": {"din": "02443937", "brand": "Jardiance", "price": 2.76, "group": "empa"},
    "02471477": {
        "din": "02471477",
        "brand": "Generic empagliflozin",
        "price": 1.10,
        "group": "empa",
    },
}


class Section(BaseModel):
    section_id: str
    document_id: str
    source_org: str
    text: str
    score: float


class SearchResult(BaseModel):
    provenance: list[str]
    confidence: float
    sections: list[Section]
    total_matches: int


class SectionV2(BaseModel):
    section_id: str
    document_id: str
    source_org: str
    text: str
    score: str


class SearchResultV2(BaseModel):
    provenance: list[str]
    confidence: float | None = None
    sections: list[SectionV2]


class FeeItem(BaseModel):
    code: str
    description: str
    fee: float


class ScheduleResult(BaseModel):
    provenance: list[str]
    confidence: float
    items: list[FeeItem]


class Coverage(BaseModel):
    covered: bool
    din: str
    brand_name: str


class Interchangeable(BaseModel):
    din: str
    brand: str
    price: float
    lowest_cost: bool


class LowestCost(BaseModel):
    din: str
    brand: str
    price: float


class OdbResult(BaseModel):
    provenance: list[str]
    confidence: float
    coverage: Coverage
    interchangeable: list[Interchangeable]
    lowest_cost: LowestCost


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _timings(sql: float | None, vector: float | None) -> dict[str, Any]:
    total = max(v for v in (sql, vector, 0.0) if v is not None) + 0.5
    return {"timings_ms": {"sql": sql, "vector": vector, "total": total}}


def build_server(broken: str | None = None, auth: Any = None) -> FastMCP:
    """The fake backend; ``broken`` selects one deliberate defect (see the module docstring)."""
    broken = broken if broken is not None else os.environ.get("FAKE_BREAK") or None
    mcp = FastMCP("fake-clinical", auth=auth)

    search_schema = (SearchResultV2 if broken == "contract" else SearchResult).model_json_schema()

    async def search_sections(
        query: str, n_results: int = 5, search_mode: str = "hybrid"
    ) -> ToolResult:
        """Token-overlap search over four sections; child chunk ids are returned like the real
        server (``:c1``), and the modes differ: keyword drops to rank 2 what hybrid ranks 1,
        vector loses it."""
        if search_mode not in ("hybrid", "vector", "keyword"):
            raise ToolError(
                f"search_mode: must be one of hybrid, vector, keyword; got {search_mode!r}"
            )
        words = _tokens(query)
        scored = sorted(
            ((len(words & _tokens(s["text"])), i, s) for i, s in enumerate(SECTIONS)),
            key=lambda t: (-t[0], t[1]),
        )
        hits = [s for score, _, s in scored if score > 0]
        if search_mode == "keyword" or broken == "rank":
            hits = hits[1:2] + hits[:1] + hits[2:]
        elif search_mode == "vector":
            hits = hits[1:]
        hits = hits[:n_results]
        sections = [
            {**s, "section_id": s["section_id"] + ":c1", "score": round(1.0 - 0.1 * rank, 2)}
            for rank, s in enumerate(hits)
        ]
        if broken == "schema":
            return ToolResult(
                structured_content={"provenance": "sql", "sections": sections},
                meta=_timings(3.0, 5.0),
            )
        result = {
            "provenance": ["sql", "vector"],
            "confidence": 0.9 if hits else 0.0,
            "sections": sections,
            "total_matches": len(hits),
        }
        return ToolResult(structured_content=result, meta=_timings(3.0, 5.0))

    @mcp.tool(name="schedule.get", output_schema=ScheduleResult.model_json_schema())
    async def schedule_get(codes: list[str]) -> ToolResult:
        """Fee codes from the fake schedule; unknown codes are a tool error naming ``codes``."""
        if broken == "error":
            raise ToolError("internal failure while reading the schedule")
        unknown = [c for c in codes if c not in FEES]
        if unknown:
            raise ToolError(f"codes: unknown fee code(s) {', '.join(unknown)}")
        result = {"provenance": ["sql"], "confidence": 0.95, "items": [FEES[c] for c in codes]}
        return ToolResult(structured_content=result, meta=_timings(1.0, None))

    async def odb_get(din: str) -> ToolResult:
        """Coverage of one DIN, its interchangeable group and the lowest-cost member."""
        if din not in DRUGS:
            raise ToolError(f"din: no drug with DIN {din!r}")
        drug = DRUGS[din]
        group = sorted(
            (d for d in DRUGS.values() if d["group"] == drug["group"]), key=lambda d: d["din"]
        )
        cheapest = min(group, key=lambda d: d["price"])
        result = {
            "provenance": ["sql", "vector"],
            "confidence": 0.93,
            "coverage": {"covered": broken != "value", "din": din, "brand_name": drug["brand"]},
            "interchangeable": [
                {
                    "din": d["din"],
                    "brand": d["brand"],
                    "price": d["price"],
                    "lowest_cost": d is cheapest,
                }
                for d in group
            ],
            "lowest_cost": {
                "din": cheapest["din"],
                "brand": cheapest["brand"],
                "price": cheapest["price"],
            },
        }
        return ToolResult(structured_content=result)

    if broken != "missing":
        mcp.tool(name="odb.get", output_schema=OdbResult.model_json_schema())(odb_get)
    if broken == "contract":

        async def search_sections_v2(
            query: str, search_mode: str, n_results: int = 5
        ) -> ToolResult:
            """The same search with ``search_mode`` now required."""
            return await search_sections(query, n_results, search_mode)

        mcp.tool(name="opa.search_sections", output_schema=search_schema)(search_sections_v2)
    else:
        mcp.tool(name="opa.search_sections", output_schema=search_schema)(search_sections)
    return mcp


def main(argv: list[str] | None = None) -> None:
    """stdio by default; ``--http PORT [--token T]`` serves streamable HTTP on 127.0.0.1."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None)
    parser.add_argument("--token", default=None)
    args = parser.parse_args(argv)
    if args.http is None:
        build_server().run(show_banner=False)
        return
    auth = None
    if args.token:
        from fastmcp.server.auth.providers.jwt import StaticTokenVerifier

        auth = StaticTokenVerifier(tokens={args.token: {"client_id": "test", "scopes": []}})
    build_server(auth=auth).run(
        transport="http", host="127.0.0.1", port=args.http, show_banner=False
    )


if __name__ == "__main__":
    main()
