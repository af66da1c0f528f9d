"""The `odb_documents` passages: one per interchangeable group (its products, prices, LU codes),
one per LU code, one per product note, and the ODB policy notes."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from reference_server.catalog import odb_group_id, odb_lu_id, odb_note_id, odb_policy_id
from reference_server.index.off_corpus import class_of, drug_classes, read_csv, read_yaml
from reference_server.index.off_doc_fields import meta, money, number
from reference_server.index.types import VectorDoc

GROUP_DRUGS_PER_DOC = 30


def odb_documents(corpus_dir: Path) -> list[VectorDoc]:
    docs: list[VectorDoc] = []
    manifest = (
        json.loads((corpus_dir / "MANIFEST.json").read_text())
        if (corpus_dir / "MANIFEST.json").exists()
        else {}
    )
    odb_meta = (manifest.get("files") or {}).get("odb_drugs.csv") or {}
    edition = odb_meta.get("create_date", "")
    classes = drug_classes(corpus_dir)
    drugs = read_csv(corpus_dir / "odb_drugs.csv")
    by_group: dict[str, list[dict[str, str]]] = defaultdict(list)
    for d in drugs:
        by_group[d["group_id"]].append(d)
    lu_rows = {r["lu_code"]: r for r in read_csv(corpus_dir / "odb_lu_codes.csv")}
    for g in read_csv(corpus_dir / "odb_interchangeable_groups.csv"):
        members = sorted(
            by_group.get(g["group_id"], []),
            key=lambda d: (d["is_benefit"] != "1", float(d["individual_price"] or 1e9), d["din"]),
        )
        dclass = class_of(g.get("atc_code", ""), classes)
        lu = [c for c in (g.get("lu_codes") or "").split(";") if c]
        status = (
            "Limited Use benefit"
            if lu
            else ("general benefit" if g["n_benefit"] != "0" else "not a benefit")
        )
        # brand (usually the dearest product) first, so its name leads the document
        by_price = sorted(members, key=lambda d: -float(d["individual_price"] or 0))
        brands = list(dict.fromkeys(d["brand_name"] for d in by_price))
        alt = (
            f"{len(members)} interchangeable products (generic alternatives available)"
            if len(members) > 1
            else "single product, no interchangeable alternative"
        )
        head = (
            f"{', '.join(brands[:8])}{' ...' if len(brands) > 8 else ''} - {g['ingredient']} "
            f"{g['strength']} {g['dosage_form']}. ODB interchangeable group {g['group_id']}: "
            f"{g['generic_name']} ({g['therapeutic_class']}); {alt}. "
            f"ATC {g.get('atc_code') or 'n/a'}{' ' + g['atc_class'] if g.get('atc_class') else ''}"
            f"{'; class: ' + dclass if dclass else ''}. Coverage: {status}."
        )
        if g.get("lowest_cost_din"):
            low = next((d for d in members if d["din"] == g["lowest_cost_din"]), None)
            head += (
                f" Lowest cost: {low['brand_name'] if low else ''} DIN {g['lowest_cost_din']} at "
                f"{money(g['lowest_price'])} per unit ({g['n_lowest_cost']} product(s) at that price)."
            )
        if lu:
            head += (
                " LU codes: "
                + "; ".join(
                    f"{c} ({lu_rows[c]['indication']}; period {lu_rows[c]['period'] or 'n/a'})"
                    if c in lu_rows
                    else c
                    for c in lu
                )
                + "."
            )
        lines = []
        for d in members[:GROUP_DRUGS_PER_DOC]:
            flags = []
            if d["is_benefit"] != "1":
                flags.append("not a benefit")
            if d["lowest_cost"] == "1":
                flags.append("lowest cost")
            pays = (
                f", ODB pays {money(d['amount_mohltc_pays'])}"
                if d.get("amount_mohltc_pays")
                else ""
            )
            lines.append(
                f"- {d['brand_name']} (DIN {d['din']}, {d['manufacturer'] or d['manufacturer_id']}): "
                f"{money(d['individual_price'])}{pays}{'; ' + ', '.join(flags) if flags else ''}"
            )
        if len(members) > GROUP_DRUGS_PER_DOC:
            lines.append(f"- ... and {len(members) - GROUP_DRUGS_PER_DOC} more products")
        docs.append(
            VectorDoc(
                id=odb_group_id(g["group_id"]),
                text=head + "\n" + "\n".join(lines),
                metadata=meta(
                    source="odb_formulary",
                    doc_type="group",
                    group_id=g["group_id"],
                    generic_name=g["generic_name"],
                    ingredient=g["ingredient"],
                    strength=g["strength"],
                    dosage_form=g["dosage_form"],
                    therapeutic_class=g["therapeutic_class"],
                    atc_code=g.get("atc_code"),
                    drug_class=dclass,
                    dins=[d["din"] for d in members],
                    brands=sorted({d["brand_name"] for d in members}),
                    lowest_cost_din=g.get("lowest_cost_din"),
                    lowest_price=number(g.get("lowest_price"), float),
                    lu_codes=lu,
                    lu_required=bool(lu),
                    n_drugs=int(g["n_drugs"]),
                    edition=edition,
                ),
            )
        )
    for code, r in lu_rows.items():
        text = (
            f"ODB Limited Use code {code} ({r['generic_names'].replace(';', ', ')}): "
            f"{r['indication']}. Authorization period: {r['period'] or 'not stated'}. "
            f"Applies to DIN(s) {r['dins'].replace(';', ', ')} (group {r['group_ids'].replace(';', ', ')})."
        )
        docs.append(
            VectorDoc(
                id=odb_lu_id(code),
                text=text,
                metadata=meta(
                    source="odb_formulary",
                    doc_type="lu_code",
                    lu_code=code,
                    generic_names=r["generic_names"],
                    dins=r["dins"],
                    group_ids=r["group_ids"],
                    period=r["period"],
                    period_days=number(r.get("period_days"), int),
                    edition=edition,
                ),
            )
        )
    for n in read_csv(corpus_dir / "odb_notes.csv"):
        ingredients = n["ingredients"].replace(";", ", ")
        docs.append(
            VectorDoc(
                id=odb_note_id(n["note_id"]),
                text=f"ODB formulary note on {ingredients} ({n['scope']}): {n['summary']}",
                metadata=meta(
                    source="odb_formulary",
                    doc_type="note",
                    note_id=n["note_id"],
                    scope=n["scope"],
                    ingredients=n["ingredients"].split(";"),
                    group_ids=n["group_ids"].split(";"),
                    n_dins=number(n.get("n_dins"), int),
                    edition=edition,
                ),
            )
        )
    for c in (read_yaml(corpus_dir / "odb_policy.yaml") or {}).get("chunks") or []:
        docs.append(
            VectorDoc(
                id=odb_policy_id(c["n"]),
                text=f"{c['title']}\n{c['text'].strip()}",
                metadata=meta(
                    source="odb_policy", doc_type="policy", title=c["title"], topics=c.get("topics")
                ),
            )
        )
    return docs
