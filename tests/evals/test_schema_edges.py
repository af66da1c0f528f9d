"""The boundary cases made from hand-written schemas: each expected edge is read off the schema
in the test (lengths, bounds, enum values, required sets), not from the generator's output."""

from __future__ import annotations

import math
import random
import re
from typing import Any

import jsonschema

from evals.run.edge_text import fitted, words
from evals.run.schema_edges import SchemaEdges, schema_edges
from ocm_common.json_types import Arguments, JsonSchema

# the reference server's free-text pattern: no control characters, not blank
TEXT = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*[^\s\x00-\x08\x0b\x0c\x0e-\x1f\x7f][^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"

SEARCH: JsonSchema = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 1000, "pattern": TEXT},
        "n_results": {"type": "integer", "minimum": 1, "maximum": 50},
        "mode": {"type": "string", "enum": ["hybrid", "vector", "keyword"]},
        "exact": {"type": "boolean"},
        "topics": {
            "type": "array",
            "maxItems": 3,
            "items": {"type": "string", "minLength": 1, "maxLength": 40, "pattern": TEXT},
        },
    },
    "required": ["query"],
}


def _by_label(made: SchemaEdges) -> dict[str, Any]:
    """Every edge by label, those sent and those that repeat an earlier edge's call."""
    return {e.label: e for e in [*made.edges, *made.repeats]}


def _values(made: SchemaEdges, name: str) -> list[Any]:
    return [e.args[name] for e in made.edges if name in e.args]


def test_every_edge_is_valid_against_its_schema() -> None:
    made = schema_edges(SEARCH)
    assert made.edges and not made.dropped
    for edge in made.edges:
        jsonschema.validate(edge.args, SEARCH)


def test_text_at_max_and_min_length_in_words_and_code_points() -> None:
    edges = _by_label(schema_edges(SEARCH))
    at_max = edges["query: maxLength 1000 words"].args["query"]
    assert len(at_max) == 1000 and re.fullmatch(r"[A-Za-z .,'-]+", at_max)
    assert "screening" in at_max or "coverage" in at_max or "consent" in at_max
    points = edges["query: maxLength 1000 codepoints"].args["query"]
    assert len(points) == 1000 and not points.isascii()
    assert any(ord(c) > 0xFFFF for c in points)  # an astral character (emoji)
    assert any(0x300 <= ord(c) <= 0x36F for c in points)  # a combining mark
    assert len(edges["query: minLength 1 words"].args["query"]) == 1
    assert len(edges["query: minLength 1 codepoints"].args["query"]) == 1
    # an array item's text edge: the item at its own maxLength 40
    assert [len(t) for t in edges["topics[]: maxLength 40 words"].args["topics"]] == [40]


def test_numbers_at_their_bounds_and_just_inside_exclusive_ones() -> None:
    schema: JsonSchema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 50},
            "k": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.0},
            "step": {"type": "integer", "minimum": 1, "maximum": 100, "multipleOf": 7},
        },
    }
    made = schema_edges(schema)
    assert sorted({v for v in _values(made, "n")} & {1, 50}) == [1, 50]
    assert {1, 9} <= set(_values(made, "k")) and not {0, 10} & set(_values(made, "k"))
    ratios = set(_values(made, "ratio"))
    assert {5e-324, math.nextafter(1.0, 0.0)} <= ratios
    assert {7, 98} <= set(_values(made, "step"))


def test_every_enum_value_and_both_booleans_in_a_few_calls() -> None:
    made = schema_edges(SEARCH)
    assert set(_values(made, "mode")) == {"hybrid", "vector", "keyword"}
    assert {True, False} <= set(_values(made, "exact"))
    choice_calls = [e for e in made.edges if e.field == "(choices)"]
    assert len(choice_calls) == 3  # the longest choice list, not 3 + 2
    assert made.choices == {"mode": "3 enum values", "exact": "2 boolean values"}


def test_arrays_at_min_and_max_items() -> None:
    edges = _by_label(schema_edges(SEARCH))
    assert edges["topics: minItems 0"].args["topics"] == []
    full = edges["topics: maxItems 3"].args["topics"]
    assert len(full) == 3 and len(set(full)) == 3
    enum_items: JsonSchema = {
        "type": "object",
        "properties": {
            "orgs": {"type": "array", "items": {"enum": ["cpso", "pho", "moh"]}, "minItems": 1}
        },
    }
    made = schema_edges(enum_items)
    labels = _by_label(made)
    assert labels["orgs: minItems 1"].args["orgs"] == ["cpso"]
    assert labels["orgs: all 3 item values"].args["orgs"] == ["cpso", "pho", "moh"]
    # each value alone once (the first is the same call as minItems 1, so it is not sent twice)
    chosen: list[Any] = [
        e.args["orgs"] for e in [*made.edges, *made.repeats] if e.field == "(choices)"
    ]
    assert sorted(chosen) == [["cpso"], ["moh"], ["pho"]]


def test_optional_fields_absent_and_present() -> None:
    edges = _by_label(schema_edges(SEARCH))
    assert set(edges["(optional): none"].args) == {"query"}
    assert set(edges["(optional): all"].args) == {"query", "n_results", "mode", "exact", "topics"}


def test_one_call_per_required_alternative() -> None:
    schema: JsonSchema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "drug": {"type": "string", "minLength": 1, "maxLength": 50},
            "din": {"type": "string", "pattern": r"^\d{1,8}$"},
            "q": {"type": "string", "minLength": 1, "maxLength": 100},
        },
        "anyOf": [{"required": ["drug"]}, {"required": ["din"]}, {"required": ["q"]}],
    }
    made = schema_edges(schema)
    # the first is the same call as "all optional fields absent": listed, not sent twice
    alternatives = [e for e in [*made.edges, *made.repeats] if e.field == "(anyOf)"]
    assert sorted(tuple(e.args) for e in alternatives) == [("din",), ("drug",), ("q",)]
    edges = _by_label(made)
    # the pattern bounds an otherwise unbounded string: 1 to 8 digits
    assert re.fullmatch(r"\d{8}", edges["din: longest 8 (pattern) from pattern"].args["din"])
    assert re.fullmatch(r"\d", edges["din: shortest 1 (pattern) from pattern"].args["din"])


def test_nested_fields_and_refs() -> None:
    schema: JsonSchema = {
        "type": "object",
        "$defs": {
            "Device": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "minLength": 1, "maxLength": 500},
                    "category": {"enum": ["mobility", "respiratory"]},
                },
                "required": ["type"],
            }
        },
        "properties": {
            "query": {"type": "string", "maxLength": 20},
            "device": {"$ref": "#/$defs/Device"},
        },
    }
    made = schema_edges(schema)
    long_type = _by_label(made)["device.type: maxLength 500 words"].args
    assert len(long_type["device"]["type"]) == 500
    assert made.choices == {"device.category": "2 enum values"}
    # no minLength on query: the empty string is its shortest edge
    assert _by_label(made)["query: empty"].args["query"] == ""


def test_a_known_good_call_is_the_base_of_each_field_edge() -> None:
    base: Arguments = {"query": "cervical screening", "n_results": 5}
    edges = _by_label(schema_edges(SEARCH, base))
    assert edges["n_results: maximum 50"].args == {"query": "cervical screening", "n_results": 50}
    assert edges["(optional): none"].args == {"query": "cervical screening"}


def test_edges_that_cannot_be_built_or_do_not_validate_are_dropped_with_a_reason() -> None:
    schema: JsonSchema = {
        "type": "object",
        "properties": {
            # a look-ahead: neither style matches and the pattern walker does not build it
            "code": {"type": "string", "pattern": r"^(?=.*\d)[a-z0-9]+$", "maxLength": 12},
            # the minimum itself is excluded by `not`
            "n": {"type": "integer", "minimum": 5, "maximum": 10, "not": {"const": 5}},
            "when": {"type": "string", "format": "date", "maxLength": 10},
        },
    }
    made = schema_edges(schema)
    dropped = {d.label: d.reason for d in made.dropped}
    assert "no string of 12 characters" in dropped["code: maxLength 12 words"]
    assert "invalid against the schema" in dropped["n: minimum 5"]
    assert "fixes the text" in dropped["when: length bounds"]
    assert _by_label(made)["when: format date"].args["when"] == "2026-11-01"
    assert 5 not in _values(made, "n") and 10 in _values(made, "n")
    for edge in made.edges:
        jsonschema.validate(edge.args, schema, format_checker=jsonschema.FormatChecker())


def test_a_tool_without_arguments_has_no_edges() -> None:
    assert schema_edges({"type": "object"}).edges == []


def test_words_are_cut_to_the_exact_length_without_a_trailing_space() -> None:
    for length in (1, 2, 57, 200, 1000):
        text = words(length, random.Random(length))
        assert len(text) == length and not text.endswith(" ") and not text.startswith(" ")


def test_a_pattern_decides_the_characters_when_the_styles_break_it() -> None:
    code = r"^[A-Za-z]{1,2}\d{3}[A-Za-z]?$"  # an OHIP fee code: 4 to 6 characters
    for length in (4, 5, 6):
        made = fitted(code, "codepoints", length, random.Random(1))
        assert made is not None and made[1] == "from pattern"
        assert len(made[0]) == length and re.search(code, made[0])
    assert fitted(code, "words", 7, random.Random(1)) is None
