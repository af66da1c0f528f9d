"""The tool registry: every tool, in the order clients see them."""

from __future__ import annotations

from typing import Any

from reference_server.tools import (
    off_adp_get,
    off_coverage_answer,
    off_odb_get,
    off_schedule_get,
    off_source_passages,
    opa_clinical_tools,
    opa_freshness_probe,
    opa_get_section,
    opa_ipac_guidance,
    opa_policy_check,
    opa_program_lookup,
    opa_search_sections,
)
from reference_server.tools.base import Tool

ALL_TOOLS: list[Tool[Any, Any]] = [
    opa_search_sections.TOOL,
    opa_get_section.TOOL,
    opa_policy_check.TOOL,
    opa_program_lookup.TOOL,
    opa_ipac_guidance.TOOL,
    opa_freshness_probe.TOOL,
    opa_clinical_tools.TOOL,
    off_coverage_answer.TOOL,
    off_schedule_get.TOOL,
    off_adp_get.TOOL,
    off_odb_get.TOOL,
    off_source_passages.TOOL,
]
