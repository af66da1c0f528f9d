"""The `ohip_chunks` passages: the own-words OHIP commentary and one passage per schedule
subsection (cut into parts of at most OHIP_CODES_PER_PASSAGE codes), each fee line written out."""

from __future__ import annotations

import json
from pathlib import Path

from reference_server.catalog import ohip_commentary_id, ohip_line_extra, ohip_subsection_id
from reference_server.index.off_corpus import ohip_passage_parts, read_csv, read_yaml
from reference_server.index.off_doc_fields import meta
from reference_server.index.types import VectorDoc


def _fee_text(r: dict[str, str]) -> str:
    kind = r.get("fee_kind")
    if kind == "percent":
        return f"+{float(r['fee_percent']):g}% premium"
    if kind == "independent_consideration":
        return "independent consideration"
    if not r.get("fee"):
        return "fee not listed"
    suffix = {"per_unit": " per unit", "per_diem": " per diem", "add_on": " add-on"}.get(
        kind or "", ""
    )
    return f"${float(r['fee']):,.2f}{suffix}"


def ohip_documents(corpus_dir: Path) -> list[VectorDoc]:
    docs: list[VectorDoc] = []
    mpath = corpus_dir / "MANIFEST.json"
    manifest = json.loads(mpath.read_text(encoding="utf-8")) if mpath.exists() else {}
    edition = ((manifest.get("files") or {}).get("ohip_fee_schedule.csv") or {}).get("edition", "")
    for c in (read_yaml(corpus_dir / "ohip_commentary.yaml") or {}).get("chunks") or []:
        codes = c.get("codes") or []
        text = f"{c['title']}\nCodes: {', '.join(codes)}\n{c['text'].strip()}"
        docs.append(
            VectorDoc(
                id=ohip_commentary_id(c["id"]),
                text=text,
                metadata=meta(
                    source="ohip_commentary",
                    doc_type="commentary",
                    title=c["title"],
                    codes=codes,
                    section=c.get("section"),
                    edition=edition,
                ),
            )
        )
    rows = read_csv(corpus_dir / "ohip_fee_schedule.csv")
    subs = {s["subsection_n"]: s for s in read_csv(corpus_dir / "ohip_subsections.csv")}
    for n, parts in ohip_passage_parts(rows).items():
        sub = subs.get(n, {})
        for p, chunk in enumerate(parts, 1):
            head = (
                f"OHIP Schedule of Benefits {edition}: section {sub.get('section', '')}, "
                f"{sub.get('subsection_title', '')} (page {sub.get('page_ref', '')})"
            )
            if len(parts) > 1:
                head += f", part {p} of {len(parts)}"
            lines = []
            for r in chunk:
                line = f"{r['code']} {r['description']}: {_fee_text(r)}"
                extra = ohip_line_extra(r.get("limits"), r.get("requirements"))
                if extra:
                    line += f" ({extra})"
                if r.get("conflict_group"):
                    line += " [fee differs between tables]"
                lines.append(line)
            pdf = (sub.get("pdf_pages") or "").split("-")[0]
            docs.append(
                VectorDoc(
                    id=ohip_subsection_id(n, p),
                    text=head + "\n" + "\n".join(lines),
                    metadata=meta(
                        source="ohip_fee_schedule",
                        doc_type="subsection",
                        section=sub.get("section"),
                        subsection=sub.get("subsection_title"),
                        page=sub.get("page_ref"),
                        pdf_page=int(pdf) if pdf.isdigit() else None,
                        part=p,
                        n_parts=len(parts),
                        codes=[r["code"] for r in chunk],
                        n_codes=len(chunk),
                        edition=edition,
                    ),
                )
            )
    return docs
