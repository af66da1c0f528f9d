"""A generated catalogue of plausible tools from many domains (clinical ones among them), so
routing can be measured with the right tool hidden among a thousand others. Seeded: the same
(count, seed) gives the same catalogue on every machine."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ocm_common.json_types import JsonObject, JsonValue
from tool_search.records import ToolRecord

if TYPE_CHECKING:
    from tool_search.sources import Catalogue

# domain -> (what it is about, the things it holds, the identifier its records have)
DOMAINS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "labs": (
        "laboratory results",
        ("lab result", "reference range", "specimen", "panel", "critical value"),
        "accession_number",
    ),
    "appointments": (
        "clinic scheduling",
        ("appointment", "provider slot", "waitlist entry", "reminder", "clinic hour"),
        "appointment_id",
    ),
    "ehr": (
        "electronic health records",
        ("progress note", "problem list", "allergy", "encounter", "discharge summary"),
        "patient_id",
    ),
    "immunization": (
        "vaccination records",
        ("immunization record", "vaccine lot", "schedule", "exemption", "adverse reaction report"),
        "patient_id",
    ),
    "eprescribing": (
        "electronic prescriptions",
        ("prescription", "refill request", "drug interaction", "dose calculation", "pharmacy"),
        "prescription_id",
    ),
    "pharmacy": (
        "pharmacy operations",
        (
            "inventory item",
            "dispensing record",
            "drug shortage",
            "compounding recipe",
            "price quote",
        ),
        "ndc",
    ),
    "claims": (
        "US health insurance claims",
        ("claim", "prior authorization", "remittance", "denial", "explanation of benefits"),
        "claim_id",
    ),
    "medicare": (
        "US Medicare rules",
        (
            "fee schedule amount",
            "coverage determination",
            "HCPCS code",
            "modifier",
            "benefit period",
        ),
        "code",
    ),
    "coding": (
        "medical coding",
        ("ICD-10 code", "CPT code", "SNOMED concept", "LOINC term", "code mapping"),
        "code",
    ),
    "imaging": (
        "medical imaging",
        ("study", "radiology report", "DICOM series", "protocol", "modality worklist"),
        "study_uid",
    ),
    "referrals": (
        "specialist referrals",
        ("referral", "specialist directory entry", "wait time", "consult letter", "triage score"),
        "referral_id",
    ),
    "telehealth": (
        "virtual care",
        ("video visit", "waiting room", "consent form", "session recording", "device check"),
        "visit_id",
    ),
    "beds": (
        "hospital capacity",
        ("bed", "ward census", "transfer request", "isolation room", "discharge forecast"),
        "ward_id",
    ),
    "nutrition": (
        "diet and nutrition",
        ("meal plan", "food item", "calorie target", "allergen", "recipe"),
        "plan_id",
    ),
    "fitness": (
        "exercise tracking",
        ("workout", "step count", "heart rate zone", "training plan", "personal record"),
        "user_id",
    ),
    "research": (
        "research literature",
        ("article", "abstract", "citation", "author profile", "journal"),
        "doi",
    ),
    "weather": (
        "weather data",
        (
            "forecast",
            "air quality reading",
            "storm alert",
            "historical temperature",
            "pollen count",
        ),
        "location",
    ),
    "calendar": (
        "calendars",
        ("event", "meeting invite", "availability", "recurring series", "time block"),
        "event_id",
    ),
    "email": (
        "email",
        ("message", "draft", "mailbox folder", "attachment", "filter rule"),
        "message_id",
    ),
    "crm": (
        "customer relationships",
        ("contact", "deal", "account", "activity log", "sales pipeline"),
        "account_id",
    ),
    "tickets": (
        "support tickets",
        ("ticket", "comment", "escalation", "service level target", "macro"),
        "ticket_id",
    ),
    "ci": (
        "build pipelines",
        ("pipeline run", "build artifact", "test report", "deployment", "runner"),
        "run_id",
    ),
    "storage": (
        "cloud storage",
        ("bucket", "object", "signed URL", "lifecycle rule", "access policy"),
        "bucket",
    ),
    "payments": (
        "payments",
        ("invoice", "refund", "payment intent", "subscription", "payout"),
        "payment_id",
    ),
    "maps": (
        "maps and routing",
        ("route", "place", "travel time", "isochrone", "address"),
        "place_id",
    ),
    "news": (
        "news",
        ("headline", "article feed", "topic alert", "source", "trending story"),
        "article_id",
    ),
    "finance": (
        "market data",
        ("stock quote", "portfolio", "exchange rate", "earnings report", "dividend"),
        "symbol",
    ),
    "travel": (
        "travel booking",
        ("flight", "hotel room", "itinerary", "fare alert", "boarding pass"),
        "booking_id",
    ),
    "hr": (
        "human resources",
        ("employee record", "leave request", "payroll run", "job posting", "performance review"),
        "employee_id",
    ),
    "courses": (
        "online learning",
        ("course", "lesson", "quiz", "enrollment", "certificate"),
        "course_id",
    ),
    "inventory": (
        "warehouse inventory",
        ("stock level", "purchase order", "shipment", "supplier", "bin location"),
        "sku",
    ),
    "translation": (
        "language services",
        ("translation", "glossary term", "language detection", "transcript", "subtitle"),
        "text",
    ),
}

# action -> (name verb, description template, arguments beyond the identifier)
ACTIONS: dict[str, tuple[str, str]] = {
    "search": (
        "search",
        "Search {what} for {thing}s matching free text and filters; returns ranked matches.",
    ),
    "get": ("get", "Get one {thing} from {what} by its identifier, with every stored field."),
    "list": ("list", "List the {thing}s in {what}, newest first, with paging."),
    "create": ("create", "Create a new {thing} in {what} from the given fields."),
    "update": ("update", "Update fields of an existing {thing} in {what}."),
    "delete": ("delete", "Delete a {thing} from {what}; cannot be undone."),
    "export": ("export", "Export {thing}s from {what} as CSV or JSON for a date range."),
    "summarize": ("summarize", "Summarise recent {thing}s in {what}: counts, trends and outliers."),
    "validate": ("validate", "Check a {thing} against the rules of {what} and list every problem."),
    "compare": ("compare", "Compare two {thing}s in {what} field by field."),
}


def _snake(text: str) -> str:
    return "_".join(text.lower().replace("-", " ").split())


def _tool(server: str, domain: str, thing: str, action: str, ident: str) -> ToolRecord:
    what, _, _ = DOMAINS[domain]
    verb, template = ACTIONS[action]
    props: JsonObject = {}
    required: list[JsonValue] = []
    if action in ("search", "summarize"):
        props["query"] = {"type": "string", "description": f"Words describing the {thing}s wanted"}
        props["limit"] = {"type": "integer", "description": "Most results returned", "default": 20}
        required.append("query")
    elif action in ("list", "export"):
        props["since"] = {"type": "string", "description": "Earliest date (YYYY-MM-DD)"}
        props["format" if action == "export" else "page"] = (
            {"type": "string", "enum": ["csv", "json"], "description": "Output format"}
            if action == "export"
            else {"type": "integer", "description": "Page number", "default": 1}
        )
    elif action == "compare":
        props[f"first_{ident}"] = {"type": "string", "description": f"The first {thing}'s {ident}"}
        props[f"second_{ident}"] = {
            "type": "string",
            "description": f"The second {thing}'s {ident}",
        }
        required += [f"first_{ident}", f"second_{ident}"]
    else:
        props[ident] = {"type": "string", "description": f"Identifier of the {thing}"}
        required.append(ident)
        if action in ("create", "update", "validate"):
            props["fields"] = {"type": "object", "description": f"The {thing}'s fields"}
    return ToolRecord(
        server=server,
        name=f"{verb}_{_snake(thing)}",
        description=template.format(what=what, thing=thing),
        input_schema={"type": "object", "properties": props, "required": required},
        source="generated",
    )


def distractor_tools(count: int, seed: int = 0) -> list[ToolRecord]:
    """`count` distinct tools drawn without replacement from every domain x thing x action."""
    combos = [
        (domain, thing, action)
        for domain, (_, things, _) in DOMAINS.items()
        for thing in things
        for action in ACTIONS
    ]
    if count > len(combos):
        raise ValueError(f"at most {len(combos)} distractor tools can be generated")
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(combos)), count))
    tools = []
    for i in chosen:
        domain, thing, action = combos[i]
        tools.append(_tool(f"gen-{domain}", domain, thing, action, DOMAINS[domain][2]))
    return tools


def distractor_catalogue(count: int, seed: int, server: str) -> Catalogue:
    """The generated tools as one catalogue; their server part keeps the domain
    (`<server>-<domain>`), so ids read like a real multi-server host."""
    from tool_search.sources import Catalogue

    tools = distractor_tools(count, seed)
    for tool in tools:
        tool.server = f"{server}-{tool.server.removeprefix('gen-')}"
    return Catalogue(f"distractors:{count}:{seed}", server, tools)
