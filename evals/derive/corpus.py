"""Read the committed corpus files the case families derive from: Dr. OFF's tables and the OPA
guidance documents."""

from __future__ import annotations

import csv
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "reference_server" / "corpus" / "off"
DEFAULT_OPA_ROOT = DEFAULT_ROOT.parent / "opa"


@dataclass(frozen=True)
class OpaSection:
    """One section of an OPA document as the index numbers it: sections with text only,
    `<document_id>:s<NN>` with NN their 1-based position among those (corpus/FORMAT.md)."""

    section_id: str
    index: int  # 1-based among the document's sections with text
    position: int  # 0-based in the file's `sections` list (what `source` names)
    data: dict[str, Any]

    @property
    def heading(self) -> str:
        return " ".join(str(self.data.get("heading") or "").split())


@dataclass(frozen=True)
class OpaDocument:
    """One OPA document file: its fields, where it lives and its numbered sections."""

    path: str  # relative to the corpus folder, e.g. 'opa/cpso/cpso-virtual-care.yaml'
    data: dict[str, Any]
    sections: tuple[OpaSection, ...]

    @property
    def document_id(self) -> str:
        return str(self.data["document_id"])

    @property
    def org(self) -> str:
        return str(self.data["source_org"])

    def source(self, field: str) -> str:
        """Where a case's expected value came from: this file and field, and the official file."""
        official = self.data.get("derived_from")
        origin = (
            f"; derived from ../shared/data/{official}"
            if official
            else "; written from public pages (derived_from null)"
        )
        return f"corpus {self.path} {field}{origin}"


class Corpus:
    """The corpus folder, each file parsed once: CSV rows as dicts of strings, JSONL as dicts."""

    def __init__(self, root: Path = DEFAULT_ROOT, opa_root: Path | None = None) -> None:
        self.root = root
        self.opa_root = opa_root if opa_root is not None else root.parent / "opa"

    @functools.cache  # noqa: B019
    def opa_documents(self) -> tuple[OpaDocument, ...]:
        """Every OPA document file under the OPA corpus folder, by organisation then id; whatever
        the folder holds (documents added later are read the same way)."""
        docs = []
        for path in sorted(self.opa_root.glob("*/*.yaml")):
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or "document_id" not in data:
                continue
            sections: list[OpaSection] = []
            for position, section in enumerate(data.get("sections") or []):
                if (section.get("text") or "").strip():
                    index = len(sections) + 1
                    sid = f"{data['document_id']}:s{index:02d}"
                    sections.append(OpaSection(sid, index, position, section))
            relative = f"opa/{path.parent.name}/{path.name}"
            docs.append(OpaDocument(relative, data, tuple(sections)))
        return tuple(sorted(docs, key=lambda d: (d.org, d.document_id)))

    @functools.cache  # noqa: B019 - one Corpus per derivation; the cache dies with it
    def rows(self, name: str) -> tuple[dict[str, str], ...]:
        with (self.root / name).open(encoding="utf-8", newline="") as fh:
            return tuple(csv.DictReader(fh))

    @functools.cache  # noqa: B019
    def records(self, name: str) -> tuple[dict[str, Any], ...]:
        lines = (self.root / name).read_text(encoding="utf-8").splitlines()
        return tuple(json.loads(line) for line in lines if line.strip())

    def edition(self, name: str) -> str:
        """The official source and edition a corpus file was ingested from (its manifest)."""
        manifest = json.loads((self.root / "MANIFEST.json").read_text(encoding="utf-8"))
        entry = manifest.get("files", {}).get(name, {})
        source = entry.get("source") or entry.get("sources") or "source not recorded"
        return source if isinstance(source, str) else ", ".join(map(str, source))
