"""The golden checks on what an answer states and cites, each registered by name with ``@check``:
a record among the results, the asked product, a section, a fact in any wording (mentions,
denies), figures from the source, the published schema, tool errors, rank order, citations that
resolve. The value checks (equals, ranges, items) are check_library.py's."""

from __future__ import annotations

import re
from typing import Any

import jsonschema

from evals.run.check_failures import (
    ContainmentFailure,
    MissingToolError,
    NotChecked,
    PathNotFound,
    RankOrderFailure,
    SchemaViolation,
    UnexpectedToolError,
    UnresolvedCitation,
    ValueMismatch,
    WrongProduct,
    _show,
)
from evals.run.check_library import as_number, items_at, same_value, value_at
from evals.run.checks import NEEDS_MORE_INFO, CheckContext, CheckSpec, check
from evals.run.fact_text import denies, states, text_under
from evals.run.jsonpath import resolve
from evals.run.public_keys import canonical, public_key, public_ranking


@check("contains_record", needs=("value",))
def contains_record(ctx: CheckContext, spec: CheckSpec) -> None:
    """Some element of the list at path has every field of the mapping ``value`` with that
    value (numbers within ``tolerance`` when given; strings case-folded with ``ignore_case``)."""
    if not isinstance(spec.value, dict) or not spec.value:
        raise ValueMismatch(spec.check, spec.path, "a non-empty mapping as value", spec.value)
    items = items_at(ctx, spec)
    for item in items:
        if isinstance(item, dict) and all(
            key in item and same_value(item[key], want, spec) for key, want in spec.value.items()
        ):
            return
    raise ContainmentFailure(
        spec.check, spec.path, f"an item with {_show(spec.value)}", items, f"{len(items)} items"
    )


@check("asked_product", needs=("value", "field"))
def asked_product(ctx: CheckContext, spec: CheckSpec) -> None:
    """The product answered (the id at path; with ``pattern``, its first group found in the
    text at path) is one of ``value``, the ids of the product asked for. When it is not, or
    nothing asked for is listed (``value`` empty), the value at ``field`` must say the answer is
    not the product asked for: true, or the decision ``needs_more_info``. An answer about
    another product that does not say so fails as WrongProduct."""
    wanted = {str(v) for v in (spec.value or [])}
    found = resolve(ctx.data, spec.path)
    got = found[0] if found else None
    if spec.pattern is not None and got is not None:
        match = re.search(spec.pattern, str(got))
        got = (match.group(1) if match.groups() else match.group(0)) if match else None
    flagged = resolve(ctx.data, spec.field or "")
    says_so = bool(flagged and flagged[0] in (True, NEEDS_MORE_INFO))
    if (got is not None and str(got) in wanted) or (got is None and not wanted):
        return
    if says_so:
        if wanted:
            raise ValueMismatch(
                spec.check,
                spec.path,
                f"one of {_show(sorted(wanted))}",
                got,
                f"{spec.field} says the product asked for was not found",
            )
        return
    if got is None:
        expected = f"one of {_show(sorted(wanted))}" if wanted else f"{spec.field} true"
        raise ValueMismatch(spec.check, spec.path, expected, None, "no product answered")
    expected = f"one of {_show(sorted(wanted))}" if wanted else f"no product, or {spec.field} true"
    raise WrongProduct(
        spec.check, spec.path, expected, got, f"answered another product with {spec.field} false"
    )


@check("schema_valid")
def schema_valid(ctx: CheckContext, spec: CheckSpec) -> None:
    """The whole result validates against the tool's published outputSchema."""
    if ctx.output_schema is None:
        raise SchemaViolation(spec.check, "$", "a published outputSchema", None, "tool has none")
    validator_cls = jsonschema.validators.validator_for(ctx.output_schema)
    validator = validator_cls(ctx.output_schema)
    # Field-level errors first: "$.provenance: 'sql' is not of type 'array'" says more than
    # the root object's "'confidence' is a required property".
    errors = sorted(
        validator.iter_errors(ctx.outcome.structured),
        key=lambda e: (not e.path, [str(p) for p in e.path]),
    )
    if errors:

        def where(error: jsonschema.ValidationError) -> str:
            return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)

        first = errors[0]
        root = isinstance(first.instance, dict) and not first.path
        got = f"object with keys {sorted(first.instance)}" if root else first.instance
        shown = "; ".join(f"{where(e)}: {e.message[:120]}" for e in errors[:3])
        more = f"; {len(errors) - 3} more" if len(errors) > 3 else ""
        raise SchemaViolation(
            spec.check,
            where(first),
            "a result valid against outputSchema",
            got,
            shown + more,
        )


@check("no_tool_error", needs_result=False)
def no_tool_error(ctx: CheckContext, spec: CheckSpec) -> None:
    """The call did not come back with isError=true."""
    if ctx.outcome.is_error:
        raise UnexpectedToolError(
            spec.check, "$", "a result", ctx.outcome.text.strip()[:300], "isError=true"
        )


@check("tool_error", needs=("field",), needs_result=False)
def tool_error(ctx: CheckContext, spec: CheckSpec) -> None:
    """The call came back with isError=true and a message naming ``field`` (and ``pattern``)."""
    assert spec.field is not None
    if not ctx.outcome.is_error:
        raise MissingToolError(
            spec.check, "$", f"a tool error naming {spec.field!r}", ctx.outcome.structured
        )
    message = ctx.outcome.text
    if spec.field.casefold() not in message.casefold():
        raise MissingToolError(
            spec.check, "$", f"the error message to mention {spec.field!r}", message
        )
    if spec.pattern is not None and re.search(spec.pattern, message, re.IGNORECASE) is None:
        raise MissingToolError(
            spec.check, "$", f"the error message to match /{spec.pattern}/", message
        )


@check("ranked_before", needs=("before", "after"), needs_result=False)
def ranked_before(ctx: CheckContext, spec: CheckSpec) -> None:
    """Retrieved id ``before`` ranks above ``after`` (which may also be absent); ids compare by
    the public key they name, so another backend's spelling of the same section counts."""
    shown = list(ctx.retrieved_ids)
    ids = public_ranking(shown)
    before, after = canonical(spec.before or ""), canonical(spec.after or "")
    if before not in ids:
        raise RankOrderFailure(
            spec.check, "retrieved ids", f"{spec.before!r} to be retrieved", shown[:10]
        )
    if after in ids and ids.index(after) < ids.index(before):
        raise RankOrderFailure(
            spec.check,
            "retrieved ids",
            f"{spec.before!r} ranked above {spec.after!r}",
            shown[:10],
            f"ranks {ids.index(before) + 1} vs {ids.index(after) + 1}",
        )


@check("equals_arg", needs=("field",))
def equals_arg(ctx: CheckContext, spec: CheckSpec) -> None:
    """The value at path equals the argument ``field`` the tool was called with (an id the
    scenario found by asking the backend first, so the golden file cannot spell it)."""
    if spec.field not in ctx.args:
        raise PathNotFound(spec.check, spec.path, f"a call argument {spec.field!r}", None)
    want = ctx.args[spec.field]
    got = value_at(ctx, spec)
    if got != want:
        raise ValueMismatch(spec.check, spec.path, f"{_show(want)} (argument {spec.field})", got)


@check("same_section", needs=("value",))
def same_section(ctx: CheckContext, spec: CheckSpec) -> None:
    """The object at path is one of the sections in ``value``: each ``{url, heading}``, the
    document's official URL (in any spelling, anywhere in the object) and, when given, the
    section's heading as the document has it (stated in the object's heading fields, or in its
    text when it has none). Section ids are each backend's own; URL and heading are public, so
    an object that names no official URL at all cannot be judged: not checked, never failed."""
    obj = value_at(ctx, spec)
    choices = spec.value if isinstance(spec.value, list) else [spec.value]
    strings = list(_strings_by_key(obj))
    keys = {public_key(text) for _, text in strings} - {None}
    if not any(key and key.startswith(("url:", "section:")) for key in keys):
        raise NotChecked(spec.check, spec.path, "it names no official URL, only its own ids")
    headings = "\n".join(t for name, t in strings if "heading" in name) or text_under(obj)
    for choice in choices:
        url_key = public_key(str(choice.get("url", "")))
        heading = choice.get("heading")
        if url_key in keys and (not heading or states(headings, heading)):
            return
    raise ValueMismatch(
        spec.check,
        spec.path,
        "one of " + _show([c.get("heading") or c.get("url") for c in choices][:4]),
        {name: text[:80] for name, text in strings if "heading" in name or "url" in name}
        or text_under(obj)[:200],
    )


def _strings_by_key(node: Any, name: str = "") -> Any:
    """(key, string) for every string under ``node``, with the key that holds it."""
    if isinstance(node, str):
        yield name, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings_by_key(value, str(key))
    elif isinstance(node, list):
        for value in node:
            yield from _strings_by_key(value, name)


@check("denies")
def denies_check(ctx: CheckContext, spec: CheckSpec) -> None:
    """The text under path says no in any wording ("not covered", "pays nothing",
    "ineligible", "won't fund"), and states ``value`` when given (a term or a list of
    alternatives: what it says no about)."""
    nodes = resolve(ctx.data, spec.path or "$")
    text = "\n".join(text_under(node) for node in nodes)
    if not text.strip():
        raise PathNotFound(spec.check, spec.path, "text to read", None)
    if not denies(text, spec.value):
        about = f" about {_show(spec.value)}" if spec.value is not None else ""
        raise ContainmentFailure(spec.check, spec.path, f"to say no{about}", text[:300])


@check("mentions", needs=("value",))
def mentions(ctx: CheckContext, spec: CheckSpec) -> None:
    """The text under path (every string below it, for a ``[*]`` path every match's) states
    each fact in ``value`` (one term or a list), however it is worded: numbers as numbers in
    digits or words, a unit in any usual spelling, public keys in any spelling, words in order
    ignoring case and plurals (evals/run/fact_text.py). With ``pattern``, only the matches
    whose text ``re.search``es it are read (e.g. the item about one code)."""
    nodes = resolve(ctx.data, spec.path or "$")
    if not nodes:
        raise PathNotFound(spec.check, spec.path, "text to read", None)
    texts = [text_under(node) for node in nodes]
    if spec.pattern is not None:
        texts = [t for t in texts if re.search(spec.pattern, t)]
        if not texts:
            raise PathNotFound(spec.check, spec.path, f"an item matching {spec.pattern!r}", None)
    text = "\n".join(texts)
    terms = spec.value if isinstance(spec.value, list) else [spec.value]
    tolerance = spec.tolerance if spec.tolerance is not None else 1e-6
    missing = [term for term in terms if not states(text, term, tolerance)]
    if missing:
        raise ContainmentFailure(
            spec.check, spec.path, f"to state {_show(missing)}", text[:300] or None
        )


@check("citations_resolve")
def citations_resolve(ctx: CheckContext, spec: CheckSpec) -> None:
    """Every citation carries a chunk id that source.passages resolves ("show source"), and a
    tool whose published outputSchema has citations cites at least one thing.

    The runner resolved the result's citations on the same target during the run; a citation
    it could not check fails. A result without citations fails when the schema has citations,
    unless the scenario says its right answer has nothing to cite (``value: false``, set by the
    ``no-citations`` tag): then, and for tools without citations, it is not checked.
    """
    evidence = ctx.citations
    path = spec.path or "$"
    if evidence is None:
        if spec.value is not False and declares_citations(ctx.output_schema):
            raise UnresolvedCitation(
                spec.check,
                path,
                "at least one citation (the tool's outputSchema has citations)",
                "none",
                "tag the scenario no-citations when the right answer has nothing to cite",
            )
        raise NotChecked(spec.check, path, "the answer cites nothing")
    if evidence.no_resolver:
        if evidence.without_id:
            raise UnresolvedCitation(
                spec.check, path, "a chunk_id on every citation", evidence.without_id[:5]
            )
        raise NotChecked(
            spec.check,
            path,
            f"the backend serves no source.passages to show the {evidence.cited} cited id(s)",
        )
    if evidence.error:
        raise UnresolvedCitation(
            spec.check, path, "source.passages to answer", evidence.error[:200]
        )
    if evidence.without_id:
        raise UnresolvedCitation(
            spec.check, path, "a chunk_id on every citation", evidence.without_id[:5]
        )
    if evidence.missing:
        raise UnresolvedCitation(
            spec.check,
            path,
            f"all {evidence.cited} cited ids resolved by source.passages",
            evidence.missing[:5],
            f"{len(evidence.missing)} missing",
        )


def declares_citations(schema: Any) -> bool:
    """Whether an outputSchema has a ``citations`` (or ``citation``) property anywhere."""
    if isinstance(schema, dict):
        props = schema.get("properties")
        if isinstance(props, dict) and ({"citations", "citation"} & set(props)):
            return True
        return any(declares_citations(v) for v in schema.values())
    if isinstance(schema, list):
        return any(declares_citations(v) for v in schema)
    return False


def _keyed_figures(node: Any, key: str, field: str) -> Any:
    """(id, figure) for every object under ``node`` naming an id at ``key`` (or
    ``<prefix>_<key>``) beside a figure at ``field`` (or ``<prefix>_<field>``, the same prefix)."""
    if isinstance(node, dict):
        for name, ident in node.items():
            if name == key or name.endswith("_" + key):
                figure = name[: len(name) - len(key)] + field
                if figure in node and ident is not None:
                    yield str(ident), node[figure]
        for child in node.values():
            yield from _keyed_figures(child, key, field)
    elif isinstance(node, list):
        for child in node:
            yield from _keyed_figures(child, key, field)


@check("source_values", needs=("value", "key", "field"))
def source_values(ctx: CheckContext, spec: CheckSpec) -> None:
    """Every figure the answer gives for an id the source lists is the source's figure: ``value``
    maps ids (DINs, fee codes) to the source's number; each object under path that names a
    listed id at ``key`` and gives a number at ``field`` (``requested_din`` beside
    ``requested_price`` too) must give that number, within ``tolerance`` (0.005 by default).
    Figures for ids the source table does not hold are not judged; an answer giving no figure
    for any listed id is not checked, which is not a pass."""
    table = {str(k): as_number(v) for k, v in (spec.value or {}).items()}
    tolerance = spec.tolerance if spec.tolerance is not None else 0.005
    roots = resolve(ctx.data, spec.path or "$")
    judged: list[tuple[str, float, float]] = []
    for root in roots:
        for ident, raw in _keyed_figures(root, spec.key or "", spec.field or ""):
            want = table.get(ident)
            got = as_number(raw)
            if want is not None and got is not None:
                judged.append((ident, got, want))
    wrong = sorted({(i, g, w) for i, g, w in judged if abs(g - w) > tolerance})
    if wrong:
        raise ValueMismatch(
            spec.check,
            spec.path,
            f"the source's {spec.field} for each {spec.key}",
            [f"{i}: {g:g} (source {w:g})" for i, g, w in wrong[:5]],
            f"{len(wrong)} of {len(judged)} figures differ from the source",
        )
    if not judged:
        raise NotChecked(
            spec.check,
            spec.path,
            f"no {spec.field} given for any of the {len(table)} {spec.key}(s) the source lists",
        )
