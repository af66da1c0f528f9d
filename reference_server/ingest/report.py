"""The OPA ingestion report: per publisher, what the crawl holds, what became a document, and why
every other file was left out. `ocm ingest report` writes it to
`corpus/opa/INGESTION.md` (a derived file: the test compares it with a fresh run).

One function per publisher turns its source folder and corpus folder into a `PublisherReport`;
`PUBLISHERS` names them, so a publisher is added with one function and one line.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import opa_cep, opa_cpso

CORPUS = Path(__file__).parents[1] / "corpus" / "opa"
DATA = Path("../shared/data/opa")
REPORT = CORPUS / "INGESTION.md"


@dataclass(frozen=True)
class Ingested:
    document_id: str
    document_type: str
    title: str
    source_file: str


@dataclass(frozen=True)
class Excluded:
    source_file: str
    reason: str


@dataclass(frozen=True)
class PublisherReport:
    publisher: str
    source_files: int
    documents: list[Ingested]
    excluded: list[Excluded]
    missing: list[
        str
    ]  # documents of the source with no authored corpus file (text in every section)

    @property
    def in_corpus(self) -> int:
        return len(self.documents) - len(self.missing)


def authored(path: Path) -> bool:
    """A corpus file exists and every one of its sections has text (no skeleton left)."""
    if not path.is_file():
        return False
    sections = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("sections") or []
    return bool(sections) and all((s.get("text") or "").strip() for s in sections)


def _missing(documents: list[Ingested], corpus_dir: Path) -> list[str]:
    return [d.document_id for d in documents if not authored(corpus_dir / f"{d.document_id}.yaml")]


def cpso_report(source_dir: Path, corpus_dir: Path) -> PublisherReport:
    """CPSO: `opa_cpso.select` decides which crawled file is which document."""
    files = sorted(source_dir.glob("*.json"))
    kept, excluded = opa_cpso.select([opa_cpso.derive(p) for p in files])
    documents = [
        Ingested(f.document_id, f.record["document_type"], f.record["title"], f.source_file)
        for f in kept
    ]
    return PublisherReport(
        "cpso",
        len(files),
        documents,
        [Excluded(e.source_file, e.reason) for e in excluded],
        _missing(documents, corpus_dir),
    )


def cep_report(source_dir: Path, corpus_dir: Path) -> PublisherReport:
    """CEP: `opa_cep.ingestion_outcome` decides which crawled file is which tool (the one rule
    `opa_cep.write_skeletons` follows too)."""
    outcome = opa_cep.ingestion_outcome(source_dir)
    documents = sorted(
        (
            Ingested(
                o.document_id,
                opa_cep.derive(source_dir / o.source_file)["document_type"],
                o.title,
                o.source_file,
            )
            for o in outcome.outcomes
            if o.document_id
        ),
        key=lambda d: d.document_id,
    )
    return PublisherReport(
        "cep",
        len(outcome.outcomes),
        documents,
        [Excluded(name, reason) for name, reason in sorted(outcome.excluded.items())],
        _missing(documents, corpus_dir),
    )


Reporter = Callable[[Path, Path], PublisherReport]
# publisher -> (report function, its folder under data/opa and under corpus/opa)
PUBLISHERS: dict[str, tuple[Reporter, str]] = {
    "cpso": (cpso_report, "cpso"),
    "cep": (cep_report, "cep"),
}


def reports(data_dir: Path = DATA, corpus_dir: Path = CORPUS) -> list[PublisherReport]:
    return [fn(data_dir / folder, corpus_dir / folder) for fn, folder in PUBLISHERS.values()]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(found: list[PublisherReport]) -> str:
    """The Markdown report, one part per publisher."""
    lines = [
        "# OPA ingestion report",
        "",
        "Derived by `ocm ingest report` from the crawled files in",
        "`../shared/data/opa/<publisher>/`; do not edit by hand (a test compares it with a fresh run).",
        "",
        "| publisher | source files | distinct documents | in the corpus | excluded files |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in found:
        lines.append(
            f"| {r.publisher} | {r.source_files} | {len(r.documents)} | "
            f"{r.in_corpus} of {len(r.documents)} | {len(r.excluded)} |"
        )
    for r in found:
        types = Counter(d.document_type for d in r.documents)
        kinds = ", ".join(f"{n} {t}" for t, n in sorted(types.items()))
        lines += [
            "",
            f"## {r.publisher.upper()}",
            "",
            f"{r.publisher.upper()}: {len(r.documents)} distinct documents ({kinds}) from "
            f"{r.source_files} source files; {r.in_corpus} of {len(r.documents)} in the corpus; "
            f"{len(r.excluded)} files excluded.",
        ]
        if r.missing:
            lines += ["", "Not yet in the corpus: " + ", ".join(f"`{m}`" for m in r.missing) + "."]
        lines += ["", "### Excluded files", ""]
        if r.excluded:
            lines += ["| source file | reason |", "| --- | --- |"]
            lines += [f"| `{e.source_file}` | {_cell(e.reason)} |" for e in r.excluded]
        else:
            lines.append("None.")
        lines += [
            "",
            "### Documents",
            "",
            "| document | type | title | source file |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| `{d.document_id}` | {d.document_type} | {_cell(d.title)} | `{d.source_file}` |"
            for d in r.documents
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """`ocm ingest report [--data DIR] [--out FILE]`: write the report."""
    parser = argparse.ArgumentParser(prog="ocm ingest report", description=main.__doc__)
    parser.add_argument("--data", type=Path, default=DATA, help="the crawled OPA files")
    parser.add_argument("--out", type=Path, default=REPORT)
    args = parser.parse_args(argv)
    found = reports(args.data, CORPUS)
    args.out.write_text(render(found), encoding="utf-8")
    for r in found:
        print(
            f"{r.publisher}: {len(r.documents)} documents from {r.source_files} files, "
            f"{r.in_corpus} in the corpus, {len(r.excluded)} excluded"
        )
    print(f"wrote {args.out}")
    return 0
