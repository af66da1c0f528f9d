"""Read the committed corpus files the case families derive from: Dr. OFF's tables and the OPA
guidance documents."""

from __future__ import annotations

import csv
import functools
import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import NotRequired, Required, TypedDict

import yaml

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "reference_server" / "corpus" / "off"
DEFAULT_OPA_ROOT = DEFAULT_ROOT.parent / "opa"
ADP_SECTIONS = "adp_sections.jsonl"


class AdpSectionRecord(TypedDict):
    """One adp_sections.jsonl record: a section of an ADP manual, as the ADP ingest writes it
    (``AdpSection`` in reference_server/ingest/adp_manual_text.py)."""

    id: str
    policy_uid: str
    adp_doc: str
    device_category: str
    manual: str
    part: str
    section_ref: str
    heading: str
    page_num: int | None
    topics: list[str]
    percentages: list[int]
    amounts: list[str]
    exclusions: list[str]
    kind: str  # policy | toc
    summary: str


# ------------------------------------------------------------- OPA document files (FORMAT.md)
class IpacRequirement(TypedDict, total=False):
    level: str  # must | should | may
    text: str
    rationale: str


class IpacChecklistItem(TypedDict, total=False):
    item: str
    required: bool
    notes: str


class IpacChecklist(TypedDict, total=False):
    name: str
    frequency: str  # per_use | daily | weekly | monthly | as_needed
    items: list[IpacChecklistItem]


class IpacBlock(TypedDict, total=False):
    """A PHO section's ``ipac:`` block."""

    topic: str  # reprocessing | ppe | hand_hygiene | environmental | general
    settings: list[str]
    items: list[str]
    requirements: list[IpacRequirement]
    best_practices: list[str]
    checklists: list[IpacChecklist]


class OpaSectionData(TypedDict):
    """One entry of a document's ``sections`` list."""

    heading: str
    text: str
    policy_level: NotRequired[str | None]  # cpso only: expectation | advice | null
    verified_from: NotRequired[list[str]]  # ids of the document's ``sources``
    unverified: NotRequired[bool]
    unverified_paragraphs: NotRequired[list[int]]  # 1-based
    ipac: NotRequired[IpacBlock]


class CepFeatures(TypedDict, total=False):
    """A CEP tool's feature anchors, null when absent."""

    assessment_algorithm: str | None
    calculator: str | None
    checklist: str | None


class CepNavigation(TypedDict):
    title: str
    anchor: str
    summary: str


class CepTool(TypedDict, total=False):
    """A CEP document's ``tool:`` block."""

    tool_id: Required[str]
    category: str
    conditions: list[str]
    features: CepFeatures
    screening_tools: list[str]
    navigation: list[CepNavigation]
    pdf_url: str | None


class ProgramEligibility(TypedDict, total=False):
    min_age: int
    max_age: int | None  # null: no upper limit
    age_criteria: str
    risk_criteria: str
    general: list[str]


class ProgramRecommendation(TypedDict, total=False):
    text: Required[str]
    category: str  # screening | diagnostic | referral | surveillance
    age_range: list[int]  # [low, high]
    frequency: str | None
    conditions: list[str]
    risk_factors: list[str]  # [] = average risk
    section: int  # 1-based index of the section it is written in
    verified_from: list[str]
    unverified: bool


# "if" is a keyword: the functional form
DecisionPoint = TypedDict(
    "DecisionPoint",
    {"if": str, "then": str, "verified_from": list[str], "unverified": bool},
    total=False,
)


class ProgramAlgorithm(TypedDict, total=False):
    name: str
    description: str
    steps: list[str]
    decision_points: list[DecisionPoint]
    verified_from: list[str]
    unverified: bool


class ProgramBlock(TypedDict, total=False):
    """An Ontario Health document's ``program:`` block."""

    key: Required[str]  # cervical | breast | colorectal | lung
    name: str
    # field (or ``intervals.<key>``) -> ids of the document's ``sources``, or "unverified"
    provenance: dict[str, list[str] | str]
    overview: str
    eligibility: ProgramEligibility
    intervals: dict[str, str]
    recommendations: list[ProgramRecommendation]
    algorithms: list[ProgramAlgorithm]
    referral_process: str
    self_referral: str
    procedures: list[str]
    locations: list[str]
    resources: list[str]


class PageSource(TypedDict, total=False):
    """A page an Ontario Health or Ministry document's facts were checked against."""

    url: str
    seen: date | str
    note: str


class OpaDocumentData(TypedDict):
    """One OPA document file, ``corpus/opa/<source_org>/<document_id>.yaml``, as YAML reads it
    (unquoted ISO dates are dates)."""

    document_id: str
    source_org: str  # cpso | ontario_health | cep | pho | moh
    document_type: str  # policy | advice | guideline | bulletin | tool | statement
    title: str
    source_url: str
    policy_number: str | None
    published_date: date | str | None
    effective_date: date | str | None
    updated_date: date | str | None
    review_date: date | str | None
    topics: list[str]
    is_superseded: bool
    superseded_by: str | None
    companion_of: str | None
    derived_from: str | None  # which ../shared/data file gave the facts
    sections: list[OpaSectionData]
    sources: NotRequired[dict[str, PageSource]]
    verified_from: NotRequired[list[str]]
    unverified: NotRequired[bool]
    tool: NotRequired[CepTool]
    program: NotRequired[ProgramBlock]


@dataclass(frozen=True)
class OpaSection:
    """One section of an OPA document as the index numbers it: sections with text only,
    `<document_id>:s<NN>` with NN their 1-based position among those (corpus/FORMAT.md)."""

    section_id: str
    index: int  # 1-based among the document's sections with text
    position: int  # 0-based in the file's `sections` list (what `source` names)
    data: OpaSectionData

    @property
    def heading(self) -> str:
        return " ".join(str(self.data.get("heading") or "").split())


@dataclass(frozen=True)
class OpaDocument:
    """One OPA document file: its fields, where it lives and its numbered sections."""

    path: str  # relative to the corpus folder, e.g. 'opa/cpso/cpso-virtual-care.yaml'
    data: OpaDocumentData
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


def _is_document(loaded: object) -> bool:
    """A YAML file that holds an OPA document (a mapping with a ``document_id``)."""
    return isinstance(loaded, dict) and "document_id" in loaded


class Corpus:
    """The corpus folder, each file parsed once: CSV rows as dicts of strings, JSONL as records."""

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
            if not _is_document(data):
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
    def adp_sections(self) -> tuple[AdpSectionRecord, ...]:
        """The ADP manuals' sections, one record a line of adp_sections.jsonl."""
        lines = (self.root / ADP_SECTIONS).read_text(encoding="utf-8").splitlines()
        return tuple(json.loads(line) for line in lines if line.strip())

    def edition(self, name: str) -> str:
        """The official source and edition a corpus file was ingested from (its manifest)."""
        manifest = json.loads((self.root / "MANIFEST.json").read_text(encoding="utf-8"))
        entry = manifest.get("files", {}).get(name, {})
        source = entry.get("source") or entry.get("sources") or "source not recorded"
        return source if isinstance(source, str) else ", ".join(map(str, source))
