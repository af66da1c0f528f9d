"""The four tools' answers over one built catalogue, with a response cache: the catalogue does
not change while the server runs, so the same arguments always give the same answer."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from reference_server.errors import NotFoundError, Problem, ToolInputError
from tool_search import models as m
from tool_search.categories import Rules, assign, load_rules
from tool_search.engine import ToolIndex, capability_search, confidence_band, describe_hit
from tool_search.examples import attach_examples
from tool_search.records import ToolRecord
from tool_search.relations import relationships
from tool_search.requests import CapabilityRequest, DetailsRequest, SearchRequest
from tool_search.sources import REFERENCE_SERVER, read_sources
from tool_search.text import terms

CACHE_SIZE = 512
# One of the four tools' typed responses (models.py); each has a last field `cached`.
Answer = TypeVar("Answer", bound=BaseModel)


class ResponseCache:
    """An LRU of answers by (tool, arguments)."""

    def __init__(self, size: int = CACHE_SIZE):
        self._size = size
        self._items: OrderedDict[str, BaseModel] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: str, kind: type[Answer]) -> Answer | None:
        """The answer stored under `key` (keys start with the tool's name, so each key holds
        answers of one kind)."""
        with self._lock:
            value = self._items.get(key)
            if not isinstance(value, kind):
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: str, value: BaseModel) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)


def _examples(tool: ToolRecord) -> list[m.ToolExample]:
    return [m.ToolExample(arguments=e["arguments"], source=e["source"]) for e in tool.examples]


class ToolSearchService:
    def __init__(self, tools: list[ToolRecord], rules: Rules, index: ToolIndex | None = None):
        assign(tools, rules)
        self.rules = rules
        self.index = index or ToolIndex(tools)
        self.tools = self.index.tools
        self.cache = ResponseCache()

    @classmethod
    def from_specs(
        cls, specs: list[str], rules_path: Path | None = None, golden: Path | None = Path("golden")
    ) -> ToolSearchService:
        tools = [t for c in read_sources(specs) for t in c.tools]
        attach_examples(tools, golden, REFERENCE_SERVER)
        return cls(tools, load_rules(rules_path) if rules_path else load_rules())

    # ------------------------------------------------------------------ shared

    def cached(self, key: str, kind: type[Answer], answer: Callable[[], Answer]) -> Answer:
        """The answer stored under `key` marked `cached`, else a new one (stored)."""
        hit = self.cache.get(key, kind)
        if hit is not None:
            return hit.model_copy(update={"cached": True})
        value = answer()
        self.cache.put(key, value)
        return value

    @staticmethod
    def request_key(tool: str, request: BaseModel) -> str:
        return tool + json.dumps(request.model_dump(mode="json"), sort_keys=True)

    def categories_known(self) -> list[str]:
        return sorted({t.category for t in self.tools})

    def category_problem(self, category: str | None) -> Problem | None:
        if category is not None and category not in self.categories_known():
            return Problem(
                "category", f"no category {category!r} in this catalogue", self.categories_known()
            )
        return None

    def resolve(self, tool_id: str) -> int:
        if tool_id in self.index.by_id:
            return self.index.by_id[tool_id]
        named = [i for i, t in enumerate(self.tools) if t.name == tool_id]
        if len(named) == 1:
            return named[0]
        if len(named) > 1:
            raise ToolInputError(
                "tool_id",
                "this tool name is listed by several servers; give server/tool",
                [self.tools[i].tool_id for i in named],
            )
        raise NotFoundError("tool", tool_id, "search_mcp_tools gives tool ids as server/tool.")

    # ------------------------------------------------------------------ the four tools

    def search(self, req: SearchRequest) -> m.SearchResponse:
        key = self.request_key("search", req)
        return self.cached(key, m.SearchResponse, lambda: self._search(req))

    def _search(self, req: SearchRequest) -> m.SearchResponse:
        start = time.perf_counter()
        keep = self.index.mask(req.category, req.tool_type)
        hits, total = self.index.search(req.query, req.search_mode, req.max_results, keep)
        results = []
        for rank, hit in enumerate(hits, 1):
            tool = self.tools[hit.row]
            results.append(
                m.ToolHit(
                    tool_id=tool.tool_id,
                    name=tool.name,
                    server=tool.server,
                    title=tool.title,
                    description=tool.description,
                    category=tool.category,
                    tool_type=tool.tool_type,  # type: ignore[arg-type]
                    score=hit.score,
                    rank=rank,
                    matched=describe_hit(self.index, hit, req.query),
                    required_parameters=tool.required,
                    examples=_examples(tool) if req.include_examples else [],
                )
            )
        bands = Counter(confidence_band(h.similarity) for h in hits)
        return m.SearchResponse(
            query=req.query,
            search_mode=req.search_mode,
            results=results,
            total_results=total,
            catalogue_size=len(self.tools),
            execution_time_ms=round((time.perf_counter() - start) * 1000, 2),
            category_breakdown=dict(sorted(Counter(r.category for r in results).items())),
            confidence_distribution=dict(sorted(bands.items())),
            query_suggestions=self._suggestions(req, results),
            navigation_hints=self._hints(req, results),
            cached=False,
        )

    def _suggestions(self, req: SearchRequest, results: list[m.ToolHit]) -> list[str]:
        out = []
        if not results:
            out.append("No tool matched: try search_mode='semantic' or fewer filters.")
        if req.search_mode == "keyword" and results and len(results) < req.max_results:
            out.append(
                "Keyword search only returns tools sharing a word; try search_mode='hybrid'."
            )
        if results:
            asked = set(terms(req.query))
            words = [w for w in terms(results[0].description) if w not in asked]
            common = [w for w, _ in Counter(words).most_common(3)]
            if common:
                out.append(f"Closer to the best match: add {', '.join(common)}.")
        if len(req.query.split()) <= 2:
            out.append("Short queries are ambiguous: say what you want to find out or do.")
        return out

    def _hints(self, req: SearchRequest, results: list[m.ToolHit]) -> list[str]:
        out = []
        if results:
            out.append(
                f"get_tool_details(tool_id='{results[0].tool_id}') shows its schema, examples and related tools."
            )
        cats = {r.category for r in results}
        if len(cats) > 1 and req.category is None:
            out.append(f"Narrow with category= one of {', '.join(sorted(cats))}.")
        out.append("list_tool_categories() shows every category and server.")
        return out

    def details(self, req: DetailsRequest) -> m.ToolDetailsResponse:
        row = self.resolve(req.tool_id)
        key = self.request_key("details", req)
        return self.cached(key, m.ToolDetailsResponse, lambda: self._details(req, row))

    def _details(self, req: DetailsRequest, row: int) -> m.ToolDetailsResponse:
        tool = self.tools[row]
        params = [
            m.ParameterDetail(
                name=p.name,
                type=p.type,
                required=p.required,
                description=p.description,
                default=p.default,
                allowed_values=list(p.enum),
            )
            for p in tool.parameters
        ]
        return m.ToolDetailsResponse(
            tool_id=tool.tool_id,
            name=tool.name,
            server=tool.server,
            title=tool.title,
            description=tool.description,
            category=tool.category,
            tool_type=tool.tool_type,  # type: ignore[arg-type]
            complexity=tool.complexity,  # type: ignore[arg-type]
            source=tool.source,
            annotations=tool.annotations,
            parameters=params,
            included_sections={
                "schema": req.include_schema,
                "examples": req.include_examples,
                "relationships": req.include_relationships,
                "usage_guidance": req.include_usage_guidance,
            },
            input_schema=tool.input_schema if req.include_schema else None,
            output_schema=tool.output_schema if req.include_schema else None,
            examples=_examples(tool) if req.include_examples else None,
            relationships=relationships(self.index, row) if req.include_relationships else None,
            usage_guidance=self._guidance(tool) if req.include_usage_guidance else None,
            cached=False,
        )

    def _guidance(self, tool: ToolRecord) -> list[str]:
        """How to call the tool, read from its schema and annotations."""
        params = tool.parameters
        out = [
            f"Required: {', '.join(tool.required)}."
            if tool.required
            else "No argument is required."
        ]
        for p in params:
            if p.enum:
                out.append(f"'{p.name}' takes one of: {', '.join(map(str, p.enum))}.")
            elif p.default is not None:
                out.append(f"'{p.name}' defaults to {json.dumps(p.default)}.")
        if tool.input_schema.get("anyOf"):
            out.append("Give at least one of the argument sets its schema's anyOf lists.")
        if tool.input_schema.get("additionalProperties") is False:
            out.append("Unknown arguments are refused: use the names exactly.")
        hints = tool.annotations
        if hints.get("readOnlyHint"):
            out.append("Read-only: safe to call without confirmation.")
        elif hints.get("destructiveHint"):
            out.append("May change or delete data: confirm with the user first.")
        if hints.get("openWorldHint"):
            out.append("May reach outside services; answers can change over time.")
        return out

    def categories(self) -> m.CategoriesResponse:
        return self.cached("categories", m.CategoriesResponse, self._categories)

    def _categories(self) -> m.CategoriesResponse:
        groups: dict[str, list[ToolRecord]] = {}
        for tool in self.tools:
            groups.setdefault(tool.category, []).append(tool)
        return m.CategoriesResponse(
            categories=[
                m.CategorySummary(
                    name=name,
                    description=self.rules.description_of(name),
                    tool_count=len(tools),
                    tool_types=dict(sorted(Counter(t.tool_type for t in tools).items())),
                    representative_tools=[t.tool_id for t in tools[:3]],
                )
                for name, tools in sorted(groups.items())
            ],
            total_tools=len(self.tools),
            servers=dict(sorted(Counter(t.server for t in self.tools).items())),
            cached=False,
        )

    def capability(self, req: CapabilityRequest) -> m.CapabilityResponse:
        key = self.request_key("capability", req)
        return self.cached(key, m.CapabilityResponse, lambda: self._capability(req))

    def _capability(self, req: CapabilityRequest) -> m.CapabilityResponse:
        start = time.perf_counter()
        found, total, excluded = capability_search(
            self.index,
            req.capability_description,
            list(req.required_parameters),
            req.preferred_complexity,
            req.max_results,
        )
        results = [
            m.CapabilityHit(
                tool_id=self.tools[h.row].tool_id,
                name=self.tools[h.row].name,
                server=self.tools[h.row].server,
                description=self.tools[h.row].description,
                category=self.tools[h.row].category,
                complexity=self.tools[h.row].complexity,  # type: ignore[arg-type]
                score=h.score,
                rank=rank,
                parameter_matches=matches,
                matched=describe_hit(self.index, h, req.capability_description),
            )
            for rank, (h, matches) in enumerate(found, 1)
        ]
        return m.CapabilityResponse(
            capability_description=req.capability_description,
            required_parameters=list(req.required_parameters),
            preferred_complexity=req.preferred_complexity,
            results=results,
            total_results=total,
            execution_time_ms=round((time.perf_counter() - start) * 1000, 2),
            excluded=excluded,
            cached=False,
        )
