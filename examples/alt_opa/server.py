"""The six tools over FastMCP, each with the schemas ``schemas.json`` publishes.

Each tool is a :class:`fastmcp.tools.Tool` whose ``parameters`` and ``output_schema`` are the
entries of ``schemas.json``, so ``tools/list`` shows them unchanged: for ``opa.search_sections``
and ``opa.get_section`` the reference server's schemas as they are (copied from
``tests/snapshots/tool_schemas.json``); for ``opa.freshness_probe`` the spec's request and
response fields only, written here from the spec (no field the reference server adds beyond it);
likewise for ``opa.policy_check`` (:mod:`examples.alt_opa.policy`).
``opa.clinical_tools`` (:mod:`examples.alt_opa.cep_catalogue`) has the spec's fields only too,
and so has ``opa.ipac_guidance`` (:mod:`examples.alt_opa.ipac`).
Arguments are validated against that input schema here (FastMCP does not for a hand-made tool);
a bad argument is one tool error that names the field and, for a choice, the allowed values.
Anything else that goes wrong is masked.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, TypedDict

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import Tool
from fastmcp.tools.base import ToolResult
from jsonschema import Draft202012Validator
from mcp.types import TextContent, ToolAnnotations
from pydantic import JsonValue, PrivateAttr

from examples.alt_opa.cep_catalogue import Catalogue, ClinicalToolsResult, answer
from examples.alt_opa.cep_catalogue import Request as ToolsRequest
from examples.alt_opa.corpus import ORG_NAMES, Corpus, Document, Section, load_corpus
from examples.alt_opa.freshness import FreshnessResult, Request, probe
from examples.alt_opa.ipac import IpacGuide, IpacResult
from examples.alt_opa.ipac import Request as IpacRequest
from examples.alt_opa.payloads import (
    DocumentBlock,
    PageCitation,
    SearchResult,
    SectionBody,
    SectionResult,
    SectionRow,
)
from examples.alt_opa.policy import DEFAULT_RESULTS, PolicyCheck, PolicyResult
from examples.alt_opa.policy import Request as PolicyRequest
from examples.alt_opa.search import (
    RELEVANCE_FLOOR,
    Filters,
    Hit,
    SectionSearch,
    promote_second_document,
)

SCHEMAS_FILE = Path(__file__).with_name("schemas.json")
DEFECTS_ENV = "ALT_OPA_DEFECTS"
DEFECTS = ("wrong_document", "no_url", "slow")
SLOW_SECONDS = 0.3
TEXT_LIMIT = 1200
PROVENANCE = ["sql"]  # one lexical path; the schema's vocabulary calls that path "sql"
BASE_CONFIDENCE = 0.6
CORROBORATION_STEP = 0.03
CORROBORATION_CAP = 0.15
WEAK_CONFIDENCE_CAP = 0.5


class ToolSchemas(TypedDict):
    """One tool's entry in schemas.json: its published JSON Schemas."""

    inputSchema: dict[str, JsonValue]
    outputSchema: dict[str, JsonValue]


def load_schemas() -> dict[str, ToolSchemas]:
    data: dict[str, ToolSchemas] = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    return data


# The arguments arrive validated against the tool's published inputSchema (SchemaTool.run), so
# each is absent or of its schema's type; these read them as that type.
def _text(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


def _texts(value: JsonValue) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _int(value: JsonValue) -> int:
    """`int(value)`, with its TypeError for a list, object or null."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"int() argument must be a string or a number, not {value!r}")


def parse_defects(raw: str | None) -> frozenset[str]:
    names = {p.strip() for p in (raw or "").split(",") if p.strip()}
    unknown = names - set(DEFECTS)
    if unknown:
        raise ValueError(
            f"{DEFECTS_ENV}: unknown defect(s) {sorted(unknown)}; known: {', '.join(DEFECTS)}"
        )
    return frozenset(names)


@dataclass
class Backend:
    corpus: Corpus
    search: SectionSearch
    defects: frozenset[str] = frozenset()
    catalogue: Catalogue | None = None  # opa.clinical_tools' CEP tools, read on first use
    ipac: IpacGuide | None = None  # opa.ipac_guidance's PHO and CPSO IPAC text, on first use

    @classmethod
    def build(cls, corpus: Corpus | None = None, defects: frozenset[str] = frozenset()) -> Backend:
        corpus = corpus or load_corpus()
        return cls(corpus, SectionSearch(corpus), defects, Catalogue.build(corpus))

    # ------------------------------------------------------------------ shared pieces

    def url(self, doc: Document) -> str:
        return "" if "no_url" in self.defects else doc.url

    def document_block(self, doc: Document) -> DocumentBlock:
        return {
            "document_id": doc.doc_id,
            "title": doc.title,
            "source_org": doc.org,
            "source_url": self.url(doc),
            "document_type": doc.doc_type,
            "effective_date": doc.effective_date,
            "updated_date": doc.updated_date,
            "published_date": doc.published_date,
            "topics": list(doc.topics),
            "policy_level": doc.policy_level,
            "is_superseded": False,
            "superseded_by": None,
        }

    def locator(self, section: Section) -> str:
        where = section.heading
        if section.page is not None:
            where += f", p. {section.page}"
        return where

    # ------------------------------------------------------------------ opa.search_sections

    def search_sections(self, args: dict[str, JsonValue]) -> SearchResult:
        query = str(args["query"])
        if args.get("search_mode") == "vector":
            raise ToolError(
                "search_mode 'vector' is not available here: this backend has one keyword "
                "(BM25) path, which 'hybrid' and 'keyword' both use"
            )
        filters = Filters(
            source_org=_text(args.get("source_org")),
            document_type=_text(args.get("document_type")),
            topics=_texts(args.get("topics")),
            include_superseded=bool(args.get("include_superseded", False)),
        )
        n = _int(args.get("n_results", 5))
        hits = self.search.search(query, filters)
        if "wrong_document" in self.defects:
            hits = promote_second_document(hits)
        shown = hits[:n]
        weak = not shown or self.search.coverage(query, shown[0].section) < RELEVANCE_FLOOR
        confidence = self.confidence(shown, weak)
        return {
            "provenance": list(PROVENANCE),
            "confidence": confidence,
            "sections": [self.hit_row(h) for h in shown],
            "total_matches": len(hits),
            "no_relevant_document": weak,
            "conflicts": [],
            "citations": [
                {
                    "source": self.corpus.documents[h.section.doc_id].title,
                    "loc": self.locator(h.section),
                    "chunk_id": h.section.section_id,
                    "page": h.section.page,
                }
                for h in shown
            ],
        }

    def confidence(self, shown: list[Hit], weak: bool) -> float:
        """One path, so a single-path base; each further shown section of the top document
        corroborates a little; a question no document addresses is capped low."""
        if not shown:
            return 0.0
        top_doc = shown[0].section.doc_id
        support = sum(1 for h in shown[1:] if h.section.doc_id == top_doc)
        value = BASE_CONFIDENCE + min(CORROBORATION_CAP, CORROBORATION_STEP * support)
        if weak:
            value = min(value, WEAK_CONFIDENCE_CAP) - 0.2
        return round(max(0.0, min(1.0, value)), 3)

    def hit_row(self, hit: Hit) -> SectionRow:
        s = hit.section
        doc = self.corpus.documents[s.doc_id]
        text = s.text
        if len(text) > TEXT_LIMIT:
            text = text[:TEXT_LIMIT].rsplit(" ", 1)[0] + " …"
        return {
            "section_id": s.section_id,
            "document_id": doc.doc_id,
            "chunk_type": "parent",
            "text": text,
            "score": round(hit.score, 4),
            "source_org": doc.org,
            "source_url": self.url(doc),
            "document_title": doc.title,
            "section_heading": s.heading,
            "effective_date": doc.effective_date,
            "updated_date": doc.updated_date,
            "topics": list(doc.topics),
            "policy_level": doc.policy_level,
            "is_superseded": False,
        }

    # ------------------------------------------------------------------ opa.get_section

    def get_section(self, args: dict[str, JsonValue]) -> SectionResult:
        wanted = str(args["section_id"]).strip()
        section, paragraph = self.resolve(wanted)
        doc = self.corpus.documents[section.doc_id]
        paragraphs = section.paragraphs()
        if paragraph is None:
            body = self.body(section)
        else:
            body = self.child_body(section, paragraph, paragraphs[paragraph - 1])
        out: SectionResult = {
            "section": body,
            "citation": self.citation(section, doc, wanted),
            "provenance": list(PROVENANCE),
            "conflicts": [],
            "document": self.document_block(doc)
            if args.get("include_document_metadata", True)
            else None,
            "parent": self.body(section)
            if paragraph is not None and args.get("include_parent", True)
            else None,
        }
        if paragraph is None and args.get("include_children", False):
            out["children"] = [
                self.child_body(section, k, text) for k, text in enumerate(paragraphs, start=1)
            ]
        return out

    def resolve(self, wanted: str) -> tuple[Section, int | None]:
        base, sep, tail = wanted.rpartition("-p")
        if sep and tail.isdigit() and base in self.corpus.by_id:
            section = self.corpus.by_id[base]
            if 1 <= int(tail) <= len(section.paragraphs()):
                return section, int(tail)
        elif wanted in self.corpus.by_id:
            return self.corpus.by_id[wanted], None
        raise ToolError(
            f"section_id {wanted!r} not found. This backend's section ids look like "
            "'doc0001-sec01' (a paragraph: 'doc0001-sec01-p2'); opa.search_sections "
            "returns them."
        )

    def body(self, section: Section) -> SectionBody:
        return {
            "section_id": section.section_id,
            "chunk_type": "parent",
            "text": section.text,
            "section_heading": section.heading,
            "section_idx": section.idx,
            "chunk_idx": None,
        }

    def child_body(self, section: Section, k: int, text: str) -> SectionBody:
        return {
            "section_id": f"{section.section_id}-p{k}",
            "chunk_type": "child",
            "text": text,
            "section_heading": section.heading,
            "section_idx": section.idx,
            "chunk_idx": k,
        }

    def citation(self, section: Section, doc: Document, chunk_id: str) -> PageCitation:
        anchor = section.anchor
        if anchor is None and section.page is not None and doc.url.lower().endswith(".pdf"):
            anchor = f"page={section.page}"
        url = self.url(doc)
        if url and anchor:
            url = f"{url}#{anchor}"
        dated = (
            f" (version of {doc.effective_date or doc.updated_date})"
            if (doc.effective_date or doc.updated_date)
            else ""
        )
        text = f"{ORG_NAMES.get(doc.org, doc.org)}: “{doc.title}”, section “{self.locator(section)}”{dated}"
        return {"text": text, "url": url, "anchor": anchor, "chunk_id": chunk_id}

    # ------------------------------------------------------------------ opa.freshness_probe

    def freshness_probe(
        self, args: dict[str, JsonValue], today: date | None = None
    ) -> FreshnessResult:
        """Stale documents by the spec's rules (:mod:`examples.alt_opa.freshness`), aged
        against ``today`` (the real date unless given). No extract marks a document
        superseded, so none is passed as such."""
        request = Request(
            document_ids=tuple(i.strip() for i in _texts(args.get("document_ids"))),
            source_orgs=_texts(args.get("source_orgs")),
            topics=_texts(args.get("topics")),
            check_web=bool(args.get("check_web", False)),
        )
        return probe(self.corpus, request, today or date.today())

    # ------------------------------------------------------------------ opa.clinical_tools

    def clinical_tools(self, args: dict[str, JsonValue]) -> ClinicalToolsResult:
        """CEP clinical tools by condition, name, category and feature
        (:mod:`examples.alt_opa.cep_catalogue`)."""
        if self.catalogue is None:
            self.catalogue = Catalogue.build(self.corpus)
        request = ToolsRequest(
            condition=_text(args.get("condition")),
            tool_name=_text(args.get("tool_name")),
            category=_text(args.get("category")),
            feature_type=_text(args.get("feature_type")),
            include_sections=bool(args.get("include_sections", False)),
        )
        return answer(self.catalogue, request)

    # ------------------------------------------------------------------ opa.policy_check

    def policy_check(self, args: dict[str, JsonValue]) -> PolicyResult:
        """CPSO policy and advice sections, expectations first
        (:mod:`examples.alt_opa.policy`)."""
        request = PolicyRequest(
            query=str(args["query"]),
            policy_level=_text(args.get("policy_level")) or "all",
            include_advice=bool(args.get("include_advice", True)),
            n_results=_int(args.get("n_results", DEFAULT_RESULTS)),
        )
        return PolicyCheck(self.corpus, self.search).check(request, self.url)

    # ------------------------------------------------------------------ opa.ipac_guidance

    def ipac_guidance(self, args: dict[str, JsonValue]) -> IpacResult:
        """PHO IPAC requirements, best practices and checklists for a topic, with conflicts
        against CPSO's IPAC pages (:mod:`examples.alt_opa.ipac`)."""
        if self.ipac is None:
            self.ipac = IpacGuide(self.corpus)
        request = IpacRequest(
            topic=str(args["topic"]),
            setting=_text(args.get("setting")) or "office",
            specific_item=_text(args.get("specific_item")),
            include_checklists=bool(args.get("include_checklists", True)),
        )
        return self.ipac.answer(request, self.url)


# ---------------------------------------------------------------------- FastMCP wiring


def _field_of(error: Any) -> str:
    """The argument an input-schema error is about (its message names it for the rest)."""
    path = [str(p) for p in error.absolute_path]
    return ".".join(path) if path else "arguments"


class SchemaTool(Tool):
    """A tool with a fixed published schema and a plain handler ``dict -> dict``."""

    _handler: Any = PrivateAttr()
    _validator: Any = PrivateAttr()
    _delay: float = PrivateAttr(default=0.0)

    def bind(self, handler: Any, delay: float = 0.0) -> SchemaTool:
        self._handler = handler
        self._validator = Draft202012Validator(self.parameters)
        self._delay = delay
        return self

    async def run(self, arguments: dict[str, JsonValue]) -> ToolResult:
        errors = sorted(
            self._validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.path]
        )
        if errors:
            first = errors[0]
            raise ToolError(f"invalid {_field_of(first)}: {first.message}")
        if self._delay:
            await asyncio.sleep(self._delay)
        result = await asyncio.to_thread(self._handler, dict(arguments))
        return ToolResult(
            content=[TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
        )


DESCRIPTIONS = {
    "opa.search_sections": (
        "Keyword search (BM25) over the sections of Ontario practice guidance from CPSO, "
        "the Centre for Effective Practice and Public Health Ontario. Returns the best "
        "sections with their document's official URL, organisation, title and heading. "
        "Filters: organisation, document type, topics. It has no vector index: "
        "search_mode 'hybrid' and 'keyword' run the keyword path, 'vector' is refused."
    ),
    "opa.get_section": (
        "One section of a guidance document by the section id opa.search_sections returned, "
        "with its paragraphs, its document's details and a citation to the official page."
    ),
    "opa.clinical_tools": (
        "The Centre for Effective Practice's clinical tools: name, official URL, category, "
        "last update, summary and key features (assessment algorithm, calculator, checklist, "
        "each with a link to it on the tool's page when available, and the screening "
        "instruments it names), optionally its sections with links. Filters: condition (every "
        "word in the tool), tool_name, category (CEP's own, e.g. mental_health), feature_type."
    ),
    "opa.freshness_probe": (
        "Which guidance documents are stale: superseded ones (definitely stale), then those "
        "more than two years (likely stale) or one year (potentially stale) since their last "
        "update, oldest first, with days_old and a re-ingestion list naming each. Filters: "
        "document ids (as opa.search_sections returns them), organisations, topics. This "
        "backend is offline: check_web reports that web checking is disabled and finds no "
        "potential updates."
    ),
    "opa.policy_check": (
        "CPSO policies and their Advice to the Profession companions for a policy question: "
        "the best sections (keyword search, BM25), each marked expectation (the policy says "
        "'must') or advice (an Advice page, or a policy section that only advises), with its "
        "document's title, official URL and effective date. Among comparably relevant "
        "sections expectations come first. Filters: policy_level, include_advice."
    ),
    "opa.ipac_guidance": (
        "Public Health Ontario's infection prevention and control guidance for clinical office "
        "practice on one topic (reprocessing, ppe, hand_hygiene, environmental): its "
        "requirements, each at the level its own wording states (must, should, may) with the "
        "section it comes from, its summary best practices, its checklists (bulleted lists "
        "with a frequency), the PHO documents as references, and conflicts where CPSO's IPAC "
        "policy or advice states the same practice at another level. specific_item narrows to "
        "the requirements naming it; setting procedure_room adds the surgical sections."
    ),
}


def build_server(backend: Backend) -> FastMCP[Any]:
    schemas = load_schemas()
    server: FastMCP[Any] = FastMCP(
        name="alt-opa",
        instructions="A second, independent backend for Dr. OPA tools.",
        mask_error_details=True,
    )
    handlers = {
        "opa.search_sections": (
            backend.search_sections,
            SLOW_SECONDS if "slow" in backend.defects else 0.0,
        ),
        "opa.get_section": (backend.get_section, 0.0),
        "opa.freshness_probe": (backend.freshness_probe, 0.0),
        "opa.clinical_tools": (backend.clinical_tools, 0.0),
        "opa.policy_check": (backend.policy_check, 0.0),
        "opa.ipac_guidance": (backend.ipac_guidance, 0.0),
    }
    for name, (handler, delay) in handlers.items():
        tool = SchemaTool(
            name=name,
            description=DESCRIPTIONS[name],
            parameters=schemas[name]["inputSchema"],
            output_schema=schemas[name]["outputSchema"],
            annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ).bind(handler, delay)
        server.add_tool(tool)
    return server


def from_env() -> FastMCP[Any]:
    defects = parse_defects(os.environ.get(DEFECTS_ENV))
    return build_server(Backend.build(defects=defects))
