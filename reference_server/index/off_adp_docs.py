"""The `adp_v1` passages: ADP manual section summaries, funding rules, exclusions, descriptive
rules and the CEP income check."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reference_server.catalog import ADP_CEP_ID, adp_rule_id
from reference_server.index.off_corpus import read_csv, read_jsonl, read_yaml
from reference_server.index.off_doc_fields import meta, number
from reference_server.index.types import VectorDoc


def adp_funding_text(r: Mapping[str, Any]) -> str:
    """Passage text of one ADP funding rule (source.passages rebuilds it from the SQL row)."""
    return (
        f"ADP funding rule ({r['adp_doc']}, section {r['section_ref']}, {r['scenario']}): "
        f"{r['summary']}"
    )


def adp_exclusion_text(r: Mapping[str, Any]) -> str:
    """Passage text of one ADP exclusion (source.passages rebuilds it from the SQL row)."""
    return (
        f"ADP exclusion ({r['adp_doc']}, section {r['section_ref']}): "
        f"{r['exclusion'].replace('_', ' ')}. {r['description']}"
    )


def adp_descriptive_text(r: Mapping[str, Any]) -> str:
    """Passage text of one ADP descriptive rule (source.passages rebuilds it from the SQL row)."""
    return (
        f"ADP rule ({r['adp_doc']}, section {r['section_ref']}, "
        f"{r['topic'].replace('_', ' ')}): {r['summary']}"
    )


def _adp_rule_meta(r: dict[str, str]) -> dict[str, Any]:
    """Where an ADP funding rule or exclusion stands: manual, category, section, page, policy."""
    return {
        "adp_doc": r["adp_doc"],
        "device_category": r["device_category"],
        "section": r["section_ref"],
        "page": number(r.get("page_num"), int),
        "policy_uid": r["policy_uid"],
    }


def adp_documents(corpus_dir: Path) -> list[VectorDoc]:
    docs: list[VectorDoc] = []
    funding = read_csv(corpus_dir / "adp_funding_rule.csv")
    excl = read_csv(corpus_dir / "adp_exclusion.csv")
    f_count: dict[str, int] = defaultdict(int)
    e_count: dict[str, int] = defaultdict(int)
    for r in funding:
        f_count[r["policy_uid"]] += 1
    for r in excl:
        e_count[r["policy_uid"]] += 1
    for s in read_jsonl(corpus_dir / "adp_sections.jsonl"):
        if s.get("kind") != "policy" or not s.get("summary"):
            continue
        facts = []
        if s.get("amounts"):
            facts.append("Amounts: " + ", ".join(s["amounts"]))
        if s.get("percentages"):
            facts.append("Percentages: " + ", ".join(f"{p}%" for p in s["percentages"]))
        if s.get("exclusions"):
            facts.append("Not funded: " + ", ".join(x.replace("_", " ") for x in s["exclusions"]))
        text = (
            f"ADP {s.get('manual') or s['adp_doc']} - section {s['section_ref']}"
            f" (page {s.get('page_num')}): {s.get('heading')}\n{s['summary']}"
        )
        if facts:
            text += "\n" + "; ".join(facts)
        docs.append(
            VectorDoc(
                id=s["id"],
                text=text,
                metadata=meta(
                    source="adp_manual",
                    doc_type="section",
                    adp_doc=s["adp_doc"],
                    device_category=s.get("device_category"),
                    manual=s.get("manual"),
                    section=s["section_ref"],
                    part=s.get("part"),
                    page=s.get("page_num"),
                    policy_uid=s.get("policy_uid"),
                    heading=s.get("heading"),
                    topics=s.get("topics"),
                    funding_count=f_count.get(s["id"], 0),
                    exclusion_count=e_count.get(s["id"], 0),
                ),
            )
        )
    for r in funding:
        docs.append(
            VectorDoc(
                id=adp_rule_id(r["adp_doc"], r["section_ref"], "funding", r["rule_id"]),
                text=adp_funding_text(r),
                metadata=meta(
                    source="adp_funding_rule",
                    doc_type="funding_rule",
                    **_adp_rule_meta(r),
                    scenario=r["scenario"],
                    client_share_percent=number(r.get("client_share_percent"), float),
                    adp_share_percent=number(r.get("adp_share_percent"), float),
                    max_contribution=number(r.get("max_contribution"), float),
                    covered=r.get("covered") == "1",
                    rule_id=r["rule_id"],
                ),
            )
        )
    for r in excl:
        docs.append(
            VectorDoc(
                id=adp_rule_id(r["adp_doc"], r["section_ref"], "exclusion", r["exclusion_id"]),
                text=adp_exclusion_text(r),
                metadata=meta(
                    source="adp_exclusion",
                    doc_type="exclusion",
                    **_adp_rule_meta(r),
                    exclusion=r["exclusion"],
                    exclusion_id=r["exclusion_id"],
                ),
            )
        )
    for r in read_csv(corpus_dir / "adp_descriptive_rule.csv"):
        docs.append(
            VectorDoc(
                id=adp_rule_id(r["adp_doc"], r["section_ref"], "descriptive", r["rule_id"]),
                text=adp_descriptive_text(r),
                metadata=meta(
                    source="adp_descriptive_rule",
                    doc_type="descriptive_rule",
                    **_adp_rule_meta(r),
                    topic=r["topic"],
                    rule_id=r["rule_id"],
                ),
            )
        )
    cep = read_yaml(corpus_dir / "adp_cep.yaml")
    if cep:
        t = cep.get("thresholds") or {}
        docs.append(
            VectorDoc(
                id=ADP_CEP_ID,
                text=(
                    f"CEP income check: single ${t.get('single', 0):,}, family ${t.get('family', 0):,}. "
                    f"{cep.get('rule', '')}"
                ),
                metadata=meta(
                    source="adp_cep",
                    doc_type="cep",
                    single=t.get("single"),
                    family=t.get("family"),
                    origin=cep.get("source"),
                ),
            )
        )
    return docs
