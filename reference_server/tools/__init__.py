"""The tool registry: every tool, in the order clients see them."""

from __future__ import annotations

from typing import Any

from reference_server.tools import (
    off_source_passages,
    opa_clinical_tools,
    opa_get_section,
    opa_ipac_guidance,
    opa_policy_check,
    opa_search_sections,
)
from reference_server.tools.adp import get as adp_get
from reference_server.tools.base import Tool
from reference_server.tools.coverage import answer as coverage_answer
from reference_server.tools.freshness import probe as freshness_probe
from reference_server.tools.odb import get as odb_get
from reference_server.tools.program import lookup as program_lookup
from reference_server.tools.schedule import get as schedule_get

ALL_TOOLS: list[Tool[Any, Any]] = [
    opa_search_sections.TOOL,
    opa_get_section.TOOL,
    opa_policy_check.TOOL,
    program_lookup.TOOL,
    opa_ipac_guidance.TOOL,
    freshness_probe.TOOL,
    opa_clinical_tools.TOOL,
    coverage_answer.TOOL,
    schedule_get.TOOL,
    adp_get.TOOL,
    odb_get.TOOL,
    off_source_passages.TOOL,
]
