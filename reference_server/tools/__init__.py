"""The tool registry: every tool module's SPEC, in the order clients see them."""

from __future__ import annotations

from reference_server.tools import (
    opa_clinical_tools,
    opa_freshness_probe,
    opa_get_section,
    opa_ipac_guidance,
    opa_policy_check,
    opa_program_lookup,
    opa_search_sections,
)
from reference_server.tools.base import ToolSpec

ALL_SPECS: list[ToolSpec] = [
    opa_search_sections.SPEC,
    opa_get_section.SPEC,
    opa_policy_check.SPEC,
    opa_program_lookup.SPEC,
    opa_ipac_guidance.SPEC,
    opa_freshness_probe.SPEC,
    opa_clinical_tools.SPEC,
]
