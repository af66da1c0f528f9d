"""The one renderer for every report (eval, gate, compare, bench): Markdown and a
self-contained HTML page from the same :class:`Document`.

A report module builds a Document (titled sections of paragraphs, tables and figures) and
calls :func:`write`. The HTML page carries its figures as inline SVG and its style inline, so
it opens with no network and from any folder; the Markdown file links the same figures,
written as ``.svg`` files beside it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Tone = Literal["neutral", "good", "bad", "warn"]


@dataclass(frozen=True)
class Paragraph:
    text: str
    tone: Tone = "neutral"


@dataclass(frozen=True)
class Bullets:
    items: Sequence[str]


@dataclass(frozen=True)
class Table:
    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    title: str = ""
    note: str = ""
    # Per-row tone (same length as rows) to colour verdicts in HTML; Markdown ignores it.
    tones: Sequence[Tone] = ()


@dataclass(frozen=True)
class Figure:
    """An SVG figure (from :mod:`evals.read.plots`); ``name`` is its file name for Markdown."""

    name: str
    svg: str
    caption: str = ""


Block = Paragraph | Bullets | Table | Figure


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> Section:
        self.blocks.extend(blocks)
        return self


@dataclass
class Document:
    title: str
    meta: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    verdict: Paragraph | None = None

    def section(self, title: str, *blocks: Block) -> Section:
        section = Section(title, list(blocks))
        self.sections.append(section)
        return section

    def figures(self) -> list[Figure]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Figure)]


# ----------------------------------------------------------------------------- Markdown


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table) -> list[str]:
    lines = []
    if table.title:
        lines += [f"**{table.title}**", ""]
    if table.rows:
        lines.append("| " + " | ".join(_cell(c) for c in table.columns) + " |")
        lines.append("| " + " | ".join("---" for _ in table.columns) + " |")
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
        lines.append("")
    if table.note:
        lines += [table.note, ""]
    return lines


def to_markdown(doc: Document, figure_dir: str = "figures") -> str:
    lines = [f"# {doc.title}", ""]
    lines += [f"- {m}" for m in doc.meta]
    if doc.meta:
        lines.append("")
    if doc.verdict:
        lines += [f"**{doc.verdict.text}**", ""]
    for section in doc.sections:
        lines += [f"## {section.title}", ""]
        for block in section.blocks:
            if isinstance(block, Paragraph):
                lines += [block.text, ""]
            elif isinstance(block, Bullets):
                lines += [f"- {item}" for item in block.items] + [""]
            elif isinstance(block, Table):
                lines += markdown_table(block)
            else:
                lines += [f"![{block.caption or block.name}]({figure_dir}/{block.name}.svg)", ""]
                if block.caption:
                    lines += [f"*{block.caption}*", ""]
    return "\n".join(lines).rstrip() + "\n"


# ----------------------------------------------------------------------------- HTML

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1180px;
 color:#1d2433;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.3rem;overflow-wrap:anywhere}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d8dde6;
 padding-bottom:.2rem}
.meta{color:#5b6475;font-size:.9rem;margin:0;padding-left:1.1rem}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.86rem}
th,td{border:1px solid #d8dde6;padding:.25rem .5rem;text-align:right;vertical-align:top}
th{background:#eef1f6}td:first-child,th:first-child{text-align:left}
tr.good td{background:#e9f7ee}tr.bad td{background:#fdecec}tr.warn td{background:#fff6e0}
.verdict{font-weight:600;padding:.5rem .8rem;border-radius:6px;display:inline-block}
.good{color:#14632f}.bad{color:#9b1c1c}.warn{color:#7a5200}
p.verdict.good{background:#e9f7ee}p.verdict.bad{background:#fdecec}p.verdict.warn{background:#fff6e0}
figure{margin:1rem 0}figure svg{max-width:100%;height:auto}figcaption{color:#5b6475;font-size:.85rem}
.tcap{font-weight:600;margin-top:.8rem}.note{color:#5b6475;font-size:.88rem}
"""

_XML_HEAD = re.compile(r"^\s*<\?xml[^>]*>\s*(<!DOCTYPE[^>]*>\s*)?", re.S)


def inline_svg(svg: str) -> str:
    """An SVG document as an element to embed in HTML (no XML prolog or DOCTYPE)."""
    return _XML_HEAD.sub("", svg).strip()


def _html_table(table: Table) -> str:
    out = []
    if table.title:
        out.append(f'<div class="tcap">{html.escape(table.title)}</div>')
    if table.rows:
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
        body = []
        for i, row in enumerate(table.rows):
            tone = table.tones[i] if i < len(table.tones) else "neutral"
            cls = f' class="{tone}"' if tone != "neutral" else ""
            cells = "".join(f"<td>{html.escape(str(c))}</td>" for c in row)
            body.append(f"<tr{cls}>{cells}</tr>")
        out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")
    if table.note:
        out.append(f'<p class="note">{html.escape(table.note)}</p>')
    return "\n".join(out)


def _block_html(block: Block) -> str:
    if isinstance(block, Paragraph):
        cls = f' class="{block.tone}"' if block.tone != "neutral" else ""
        return f"<p{cls}>{html.escape(block.text)}</p>"
    if isinstance(block, Bullets):
        return "<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in block.items) + "</ul>"
    if isinstance(block, Table):
        return _html_table(block)
    caption = f"<figcaption>{html.escape(block.caption)}</figcaption>" if block.caption else ""
    return f'<figure class="plot" data-name="{html.escape(block.name)}">{inline_svg(block.svg)}{caption}</figure>'


def to_html(doc: Document) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(doc.title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(doc.title)}</h1>",
    ]
    if doc.meta:
        parts.append(
            '<ul class="meta">' + "".join(f"<li>{html.escape(m)}</li>" for m in doc.meta) + "</ul>"
        )
    if doc.verdict:
        parts.append(f'<p class="verdict {doc.verdict.tone}">{html.escape(doc.verdict.text)}</p>')
    for section in doc.sections:
        parts.append(f"<section><h2>{html.escape(section.title)}</h2>")
        parts += [_block_html(b) for b in section.blocks]
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write(doc: Document, out: Path, stem: str) -> dict[str, Path]:
    """Write ``<stem>.md`` (figures under ``<stem>_figures/``) and ``<stem>.html`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    figure_dir = f"{stem}_figures"
    figures = doc.figures()
    if figures:
        (out / figure_dir).mkdir(exist_ok=True)
        for figure in figures:
            (out / figure_dir / f"{figure.name}.svg").write_text(figure.svg, encoding="utf-8")
    md = out / f"{stem}.md"
    page = out / f"{stem}.html"
    md.write_text(to_markdown(doc, figure_dir), encoding="utf-8")
    page.write_text(to_html(doc), encoding="utf-8")
    return {"markdown": md, "html": page}
