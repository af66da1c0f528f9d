"""The four tools' arguments, as strict request models (unknown arguments are errors); the
published input schemas are made from them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from reference_server.tools.request_model import NON_BLANK, StrictModel

Text = Annotated[str, StringConstraints(min_length=1, max_length=1000, pattern=NON_BLANK)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=NON_BLANK)]


class SearchRequest(StrictModel):
    query: Text = Field(
        description="What the tool should do, in words (e.g. 'is this drug covered')."
    )
    category: Name | None = Field(
        None, description="Only tools of this category (list_tool_categories names them)."
    )
    tool_type: Literal["system", "custom", "third_party"] | None = Field(
        None, description="Only tools of this type."
    )
    max_results: int = Field(10, ge=1, le=50, description="How many tools to return (1-50).")
    include_examples: bool = Field(True, description="Add example calls to each result.")
    search_mode: Literal["keyword", "semantic", "hybrid"] = Field(
        "hybrid",
        description="keyword: BM25 over names, descriptions and arguments; semantic: the "
        "embedding model; hybrid: both fused by reciprocal rank.",
    )


class DetailsRequest(StrictModel):
    tool_id: Name = Field(
        description="`server/tool` as search results give it (a bare tool name "
        "is accepted when only one server has it)."
    )
    include_schema: bool = Field(True, description="Add the input and output JSON Schemas.")
    include_examples: bool = Field(True, description="Add example calls from known-good inputs.")
    include_relationships: bool = Field(True, description="Add alternatives and complements.")
    include_usage_guidance: bool = Field(True, description="Add how to call it well.")


class CategoriesRequest(StrictModel):
    """No arguments."""


class CapabilityRequest(StrictModel):
    capability_description: Text = Field(description="The capability needed, in words.")
    required_parameters: list[Name] = Field(
        default_factory=list,
        max_length=20,
        description="Argument names the tool must take (matched exactly, by the same words, or "
        "by a close spelling).",
    )
    preferred_complexity: Literal["simple", "moderate", "complex", "any"] = Field(
        "any", description="simple / moderate / complex by argument count and schema size."
    )
    max_results: int = Field(10, ge=1, le=50, description="How many tools to return (1-50).")
