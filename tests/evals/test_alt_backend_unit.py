"""The independent Dr. OFF backend (examples/alt_backend): parsing, published surface, and the
seeded defects (ALT_BACKEND_DEFECTS).

It reads the official files in ../shared/data (or ALT_BACKEND_DATA); without them there is
nothing to parse, so the data-dependent tests are skipped.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from jsonschema import Draft202012Validator

from examples.alt_backend.backend import Backend, NotFound
from examples.alt_backend.config import DataMissing, active_defects, check_data, data_dir
from examples.alt_backend.odb_terms import find_strength, strength_matches, strength_parts
from examples.alt_backend.server import build_server, load_schemas, validate_arguments
from examples.alt_backend.text import highlight

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO / "tests" / "snapshots" / "tool_schemas.json"
TOOLS = ("odb.get", "schedule.get", "adp.get", "source.passages")
HAVE_DATA = (data_dir() / "odb").is_dir()
needs_data = pytest.mark.skipif(
    not HAVE_DATA, reason=f"shared data folder {data_dir()} not found (set ALT_BACKEND_DATA)"
)


@pytest.fixture(scope="module")
def clean() -> Backend:
    if not HAVE_DATA:
        pytest.skip(f"shared data folder {data_dir()} not found (set ALT_BACKEND_DATA)")
    return Backend.load(defects=frozenset())


def with_defects(backend: Backend, *names: str) -> Backend:
    """The same parsed sources with defects switched on (no second parse)."""
    return Backend(
        backend.formulary,
        backend.schedule,
        backend.manuals,
        backend.store,
        frozenset(names),
        backend.load_seconds,
    )


def valid(tool: str, result: dict[str, Any]) -> bool:
    schema = load_schemas()[tool]["outputSchema"]
    return not list(Draft202012Validator(schema).iter_errors(result))


# ---------------------------------------------------------------- no data needed


def test_strength_parsing_reads_combinations_units_and_percentages() -> None:
    assert strength_parts("50mg & 1000mg") == [(50.0, "mg"), (1000.0, "mg")]
    assert strength_parts("5/160 mg") == [(5.0, "mg"), (160.0, "mg")]
    assert strength_parts("50 units") == [(50.0, "u")]
    assert strength_matches("50 units", "50U/Vial")
    assert strength_matches("1.5%", "1.5% W/W")
    assert strength_matches("25 mg", "25mg")
    assert not strength_matches("25 mg", "250mg")
    assert not strength_matches("50mg & 500mg", "50mg & 1000mg")
    assert find_strength("Is Nexium 20 mg covered?") == "20 mg"
    assert find_strength("Teva-Lisinopril (Type P) 5mg tablets") == "5mg"


def test_highlight_marks_each_term_and_caps_at_five() -> None:
    text = "Batteries are not funded. " * 10
    marks = highlight(text, ["batteries"])
    assert len(marks) == 5
    assert all("**Batteries**" in m for m in marks)
    assert highlight(text, []) == []


def test_defect_names_are_checked() -> None:
    assert active_defects("price, slow") == frozenset({"price", "slow"})
    assert active_defects("") == frozenset()
    with pytest.raises(ValueError, match="unknown defect"):
        active_defects("prize")


def test_missing_data_folder_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataMissing, match="not found"):
        check_data(tmp_path / "nowhere")
    proc = subprocess.run(
        [sys.executable, "-m", "examples.alt_backend"],
        cwd=REPO,
        env={"ALT_BACKEND_DATA": str(tmp_path / "nowhere"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot start" in lines[0], proc.stderr


def test_published_schemas_are_the_contracts() -> None:
    snapshot = json.loads(SNAPSHOT.read_text())
    ours = load_schemas()
    assert sorted(ours) == sorted(TOOLS)
    for tool in TOOLS:
        assert ours[tool]["inputSchema"] == snapshot[tool]["inputSchema"]
        assert ours[tool]["outputSchema"] == snapshot[tool]["outputSchema"]


def test_bad_arguments_name_the_field() -> None:
    schemas = load_schemas()
    with pytest.raises(Exception, match=r"top_k.*10"):
        validate_arguments(schemas["odb.get"]["inputSchema"], {"drug": "x", "top_k": 11})
    with pytest.raises(Exception, match=r"device\.category"):
        validate_arguments(
            schemas["adp.get"]["inputSchema"], {"device": {"category": "chairs", "type": "x"}}
        )


# ---------------------------------------------------------------- parsing


@needs_data
def test_formulary_products_groups_and_lu_codes(clean: Backend) -> None:
    f = clean.formulary
    ozempic = f.products["02471469"]
    assert (ozempic.brand, ozempic.generic, ozempic.price) == ("Ozempic", "SEMAGLUTIDE", 223.26)
    assert ozempic.lu_codes == ("665",) and ozempic.benefit
    assert f.lu["665"].period == "Indefinite"
    januvia = f.products["02303922"]
    assert (januvia.price, januvia.odb_pays, januvia.group_id) == (3.2787, 0.8197, "1852")
    assert len(f.groups["1852"]) == 11
    assert not f.products["02244521"].benefit  # Nexium 20 mg


@needs_data
def test_schedule_listings_components_and_spread(clean: Backend) -> None:
    s = clean.schedule
    main = s.main("C124")
    assert (main.amount, main.page, main.page_ref) == (61.15, 129, "A1")
    limits, needs = s.clauses("C124")
    assert any("one service per hospital admission" in x for x in limits)
    assert any("48 hours" in x for x in needs)
    assert [a for a, _ in s.amounts("B991")] == [20.0, 27.5]
    assert s.main("X090").components == (("H", 14.9), ("P", 6.35))
    assert s.main("J290").amount == 30.6


@needs_data
def test_adp_sections_rules_and_manual_titles(clean: Backend) -> None:
    m = clean.manuals
    batteries = m.find("mobility", "225")
    assert batteries is not None and batteries.page == 14
    assert "does not provide funding" in batteries.body()
    assert batteries.loc == "Mobility Devices Policy and Administration Manual, section 225"
    rule = m.find("mobility", "705")
    assert rule is not None and "75 percent" in rule.body()
    core = m.policies("310.00")
    assert core is not None and core.title.startswith("Policies and Procedures Manual")


# ---------------------------------------------------------------- answers


@needs_data
def test_answers_validate_and_every_citation_resolves(clean: Backend) -> None:
    calls: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], dict[str, Any]]] = [
        ("odb.get", clean.odb_get, {"q": "Is Eliquis 5 mg covered?"}),
        ("schedule.get", clean.schedule_get, {"q": "MRP discharge day", "codes": ["C124"]}),
        ("adp.get", clean.adp_get, {"query": "power wheelchair, income $19,000"}),
    ]
    for tool, call, args in calls:
        result = call(args)
        assert valid(tool, result), tool
        ids = [c["chunk_id"] for c in result["citations"]]
        assert ids, tool
        shown = clean.source_passages({"chunk_ids": ids})
        assert shown["missing_ids"] == [] and shown["total_chunks"] == len(set(ids))


@needs_data
def test_passages_missing_ids_and_all_unknown(clean: Backend) -> None:
    out = clean.source_passages(
        {"chunk_ids": ["ohip/fee/C124", "ohip/fee/ZZZZ"], "highlight_terms": ["48 hours"]}
    )
    assert out["missing_ids"] == ["ohip/fee/ZZZZ"]
    assert any("**48 hours**" in h for h in out["passages"][0]["highlights"])
    with pytest.raises(NotFound, match="not found"):
        clean.source_passages({"chunk_ids": ["nothing/here"]})


@needs_data
def test_strength_not_listed_is_said(clean: Backend) -> None:
    out = clean.odb_get({"drug": "AG-Amoxicillin", "strength": "125mg"})
    assert out["coverage"] is None and out["needs_more_info"] is True
    assert "125mg" in out["not_listed"]["message"]
    assert [row["din"] for row in out["not_listed"]["listed"]] == ["02477726"]


# ---------------------------------------------------------------- seeded defects


@needs_data
def test_defect_price_raises_odd_dins_only(clean: Backend) -> None:
    args = {"q": "Is Januvia 100 mg covered?", "top_k": 10}
    good = {r["din"]: r["price"] for r in clean.odb_get(args)["interchangeable"]}
    bad = {
        r["din"]: r["price"] for r in with_defects(clean, "price").odb_get(args)["interchangeable"]
    }
    assert good.keys() == bad.keys()
    for din, price in good.items():
        expected = round(price * 1.15, 4) if int(din[-1]) % 2 else price
        assert bad[din] == pytest.approx(expected)
    assert any(int(d[-1]) % 2 for d in good) and any(not int(d[-1]) % 2 for d in good)


@needs_data
def test_defect_citations_empties_schedule_citations(clean: Backend) -> None:
    args = {"q": "discharge day", "codes": ["C124"]}
    assert clean.schedule_get(args)["citations"]
    assert with_defects(clean, "citations").schedule_get(args)["citations"] == []


@needs_data
def test_defect_section_cites_the_neighbouring_section(clean: Backend) -> None:
    args = {"device": {"category": "mobility", "type": "walker"}}
    locs = [c["loc"] for c in clean.adp_get(args)["citations"]]
    bad = [c["loc"] for c in with_defects(clean, "section").adp_get(args)["citations"]]
    assert any(loc.endswith("section 705") for loc in locs)
    assert not any(loc.endswith("section 705") for loc in bad)
    assert any(loc.endswith("section 710") for loc in bad)


@needs_data
def test_defect_slow_sleeps(clean: Backend) -> None:
    started = time.perf_counter()
    with_defects(clean, "slow").adp_get({"query": "walker"})
    assert time.perf_counter() - started >= 0.3


@needs_data
def test_defect_wrong_product_answers_another_strength_silently(clean: Backend) -> None:
    args = {"drug": "AG-Amoxicillin", "strength": "125mg"}
    out = with_defects(clean, "wrong_product").odb_get(args)
    assert out["coverage"]["din"] == "02477726"  # the 500 mg capsule
    assert out["not_listed"] is None and out["needs_more_info"] is False


@needs_data
def test_defect_missing_field_breaks_the_schema(clean: Backend) -> None:
    out = with_defects(clean, "missing_field").odb_get({"drug": "Januvia"})
    assert "needs_more_info" not in out
    assert not valid("odb.get", out)
    assert valid("odb.get", clean.odb_get({"drug": "Januvia"}))


@needs_data
def test_defect_highlights_empties_highlights(clean: Backend) -> None:
    args = {"chunk_ids": ["adp/mobility/225"], "highlight_terms": ["batteries"]}
    assert clean.source_passages(args)["passages"][0]["highlights"]
    assert (
        with_defects(clean, "highlights").source_passages(args)["passages"][0]["highlights"] == []
    )


# ---------------------------------------------------------------- over MCP


@needs_data
async def test_tools_list_and_a_call_over_mcp(clean: Backend) -> None:
    snapshot = json.loads(SNAPSHOT.read_text())
    server = build_server(with_defects(clean, "missing_field"))
    async with Client(server) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert sorted(tools) == sorted(TOOLS)
        for name in TOOLS:
            # the wire form (the SDK puts "type" first; the snapshot's keys are sorted)
            wire = tools[name].model_dump(by_alias=True, mode="json", exclude_none=True)
            for key in ("inputSchema", "outputSchema"):
                assert json.dumps(wire[key], sort_keys=True) == json.dumps(
                    snapshot[name][key], sort_keys=True
                ), (name, key)

        # an answer that breaks the output schema still reaches the client (whose own
        # validation is switched off, as the harness does)
        async def accept(name: str, result: Any) -> None:
            return None

        client.session.validate_tool_result = accept  # type: ignore[method-assign]
        raw = await client.call_tool_mcp("odb.get", {"drug": "Januvia"})
        assert not raw.is_error and "needs_more_info" not in (raw.structured_content or {})
        bad = await client.call_tool_mcp("odb.get", {"din": "abc"})
        assert bad.is_error and "din" in bad.content[0].text  # type: ignore[union-attr]
