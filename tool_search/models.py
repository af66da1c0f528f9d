"""The typed responses of the four tools; their JSON Schemas are the published output schemas."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

SearchMode = Literal["keyword", "semantic", "hybrid"]
Complexity = Literal["simple", "moderate", "complex"]


class MatchReason(BaseModel):
    """Why a tool was returned: the query terms each field holds, and each ranking's rank."""

    fields: dict[str, list[str]] = Field(
        description="Field (name, title, description, argument_names, argument_descriptions) "
        "-> the query's terms found in it (stemmed)."
    )
    keyword_rank: int | None = Field(description="Rank by BM25 (1 = best); null: no term matched.")
    semantic_rank: int | None = Field(description="Rank by embedding similarity (1 = best).")
    similarity: float | None = Field(description="Best cosine similarity of the tool's views.")


class ToolExample(BaseModel):
    arguments: dict[str, Any]
    source: str = Field(description="Where the example comes from (a golden scenario id, a file).")


class ToolHit(BaseModel):
    tool_id: str = Field(description="`server/tool`, unique across every catalogue.")
    name: str
    server: str
    title: str | None
    description: str
    category: str
    tool_type: Literal["system", "custom", "third_party"]
    score: float = Field(description="The ranking's score (RRF in hybrid mode); higher is better.")
    rank: int
    matched: MatchReason
    required_parameters: list[str]
    examples: list[ToolExample] = Field(default_factory=list)


class SearchResponse(BaseModel):
    query: str
    search_mode: SearchMode
    results: list[ToolHit]
    total_results: int = Field(description="Tools that matched before max_results was applied.")
    catalogue_size: int
    execution_time_ms: float
    category_breakdown: dict[str, int] = Field(description="Category -> tools in the results.")
    confidence_distribution: dict[str, int] = Field(
        description="high / medium / low -> results (from the best view's similarity)."
    )
    query_suggestions: list[str]
    navigation_hints: list[str]
    cached: bool = Field(description="True when this answer came from the response cache.")


class ParameterDetail(BaseModel):
    name: str
    type: str
    required: bool
    description: str
    default: Any = None
    allowed_values: list[Any] = Field(default_factory=list)


class Relationships(BaseModel):
    alternatives: list[str] = Field(description="Tools with a similar purpose (tool ids).")
    complements: list[str] = Field(
        description="Tools used together with this one: tools it names or that name it, and "
        "tools whose required input another's output provides."
    )
    reasons: dict[str, str] = Field(description="tool id -> why it is related.")


class ToolDetailsResponse(BaseModel):
    tool_id: str
    name: str
    server: str
    title: str | None
    description: str
    category: str
    tool_type: Literal["system", "custom", "third_party"]
    complexity: Complexity
    source: str = Field(description="The catalogue spec the tool was read from.")
    annotations: dict[str, Any]
    parameters: list[ParameterDetail]
    included_sections: dict[str, bool]
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    examples: list[ToolExample] | None = None
    relationships: Relationships | None = None
    usage_guidance: list[str] | None = None
    cached: bool


class CategorySummary(BaseModel):
    name: str
    description: str
    tool_count: int
    tool_types: dict[str, int]
    representative_tools: list[str]


class CategoriesResponse(BaseModel):
    categories: list[CategorySummary]
    total_tools: int
    servers: dict[str, int] = Field(description="Server -> tools it contributes.")
    cached: bool


class CapabilityHit(BaseModel):
    tool_id: str
    name: str
    server: str
    description: str
    category: str
    complexity: Complexity
    score: float
    rank: int
    parameter_matches: dict[str, str] = Field(
        description="Each required parameter -> the tool's argument that provides it "
        "(exactly, or by a close name)."
    )
    matched: MatchReason


class CapabilityResponse(BaseModel):
    capability_description: str
    required_parameters: list[str]
    preferred_complexity: Literal["simple", "moderate", "complex", "any"]
    results: list[CapabilityHit]
    total_results: int
    execution_time_ms: float
    excluded: dict[str, int] = Field(
        description="Why candidate tools were left out: reason -> count."
    )
    cached: bool
