"""The case families that measure how confidence falls: every ADP device manual asked its funding
(its own split, or the general rule said to be one), and headings that name no one document.

Expected manuals come from the corpus files (adp_funding_rule.csv rows and the manual of each
rule's section in adp_sections.jsonl), read here independently of the family."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from evals.derive.build import derive
from evals.derive.corpus import Corpus

OFF = Path(__file__).resolve().parents[2] / "reference_server" / "corpus" / "off"
SUFFIX = " Policy and Administration Manual"


def _manuals_with_a_split() -> set[str]:
    sections = [json.loads(x) for x in (OFF / "adp_sections.jsonl").read_text().splitlines()]
    by_uid_page = {(s["policy_uid"], s["page_num"]): s["manual"] for s in sections}
    out = set()
    with (OFF / "adp_funding_rule.csv").open(encoding="utf-8") as rows:
        for row in csv.DictReader(rows):
            if row["scenario"] in ("purchase", "lease") and row["client_share_percent"]:
                page = int(row["page_num"]) if row["page_num"] else None
                manual = by_uid_page.get((row["policy_uid"], page))
                if manual is None and row["adp_doc"] == "mobility":
                    manual = "Mobility Devices" + SUFFIX  # the category's only manual
                if manual is None and row["adp_doc"] == "comm_aids":
                    manual = "Communication Aids" + SUFFIX
                if manual:
                    out.add(manual.removesuffix(SUFFIX))
    return out


def test_every_adp_manual_is_asked_its_own_split_or_the_general_rule() -> None:
    cases = derive(Corpus(), families=["adp.device_category"])["adp.device_category"]
    with_split = _manuals_with_a_split()
    assert {"Mobility Devices", "Ocular Prostheses", "Orthotic Devices"} <= with_split
    assert "Hearing Devices" not in with_split and "Limb Prostheses" not in with_split
    asked = {c.title.split(" manual,")[0] for c in cases}
    assert len(asked) == 14  # every device manual (the core Policies and Procedures aside)
    for case in cases:
        manual = case.title.split(" manual,")[0]
        checks = {(e.check, e.path) for e in case.expect}
        general = ("matches", "summary") in checks and any(
            e.value == "adp:core_manual:Section 305.01" for e in case.expect
        )
        if manual in with_split:
            assert ("equals", "funding.client_share_percent") in checks and not general, case.id
        elif manual != "Grants":
            assert general, case.id


def test_ambiguous_headings_are_asked_of_at_most_four_of_their_documents() -> None:
    cases = derive(Corpus(), families=["opa.shared_heading"])["opa.shared_heading"]
    by_query: dict[str, int] = {}
    for case in cases:
        by_query[case.args["query"].casefold()] = by_query.get(case.args["query"].casefold(), 0) + 1
        assert case.args["n_results"] == 5
    assert cases and max(by_query.values()) <= 4
    assert "pharmacotherapy options" in by_query
