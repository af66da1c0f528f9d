"""The tool registry: every tool module's SPEC, in the order clients see them."""

from __future__ import annotations

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
from reference_server.tools.base import ToolSpec

ALL_SPECS: list[ToolSpec] = [
    opa_search_sections.SPEC,
    opa_get_section.SPEC,
    opa_policy_check.SPEC,
    opa_program_lookup.SPEC,
    opa_ipac_guidance.SPEC,
    opa_freshness_probe.SPEC,
    opa_clinical_tools.SPEC,
    off_coverage_answer.SPEC,
    off_schedule_get.SPEC,
    off_adp_get.SPEC,
    off_odb_get.SPEC,
    off_source_passages.SPEC,
]

# Human titles, as a host shows them in its tool picker (the names are for the model).
TITLES: dict[str, str] = {
    "opa.search_sections": "Search Ontario practice guidance",
    "opa.get_section": "Read a guidance section",
    "opa.policy_check": "Check CPSO policy expectations",
    "opa.program_lookup": "Ontario Health screening programs",
    "opa.ipac_guidance": "Infection prevention and control guidance",
    "opa.freshness_probe": "Check guidance freshness",
    "opa.clinical_tools": "Find CEP clinical tools",
    "coverage.answer": "Answer an Ontario coverage question",
    "schedule.get": "OHIP Schedule of Benefits fee codes",
    "adp.get": "Assistive Devices Program funding",
    "odb.get": "Ontario Drug Benefit formulary",
    "source.passages": "Show cited source passages",
}
