"""Outbound requests: does a tool fetch a URL its caller chose? Every argument that looks like
a URL (named url, link, endpoint, webhook..., described as a URL, or with a URI format) gets
``http://127.0.0.1:<port>/<random path>`` of the harness's own canary listener; an argument
that looks like a host name gets ``127.0.0.1:<port>``. A request arriving at the listener
proves the tool reaches caller-chosen addresses (server-side request forgery). The value is
always that loopback listener, never another address; the wait for a late request is
bounded."""

from __future__ import annotations

import asyncio
import re
import secrets
import time

from evals.run.security.canary_listener import CanaryListener, Hit
from evals.run.security.capability import finding, is_string, recognised
from evals.run.security.findings import Finding
from evals.run.security.probe import probe_call
from evals.run.security.registry import Context
from evals.run.security.surface import ToolSurface

CHECK = "outbound_request"
URL_NAMES = frozenset(
    {"url", "urls", "uri", "link", "href", "endpoint", "webhook", "callback", "website"}
    | {"feed", "homepage", "src", "remote"}
)
URL_WORDS = re.compile(r"\b(URLs?|URIs?|web ?address|web ?page|webhook|endpoint)\b")
URL_FORMATS = frozenset({"uri", "url", "iri", "uri-reference", "iri-reference"})
HOST_NAMES = frozenset({"host", "hostname", "domain", "server", "ip"})
HOST_WORDS = re.compile(r"\b(host ?name|domain name|IP address)\b", re.I)
LATE_REQUEST_WAIT_S = 0.5


async def _wait(listener: CanaryListener, token: str | None, since: float) -> list[Hit]:
    """Requests for ``token`` (or any request since ``since``), waiting briefly for a late
    one (a tool may fetch after answering)."""
    deadline = time.monotonic() + LATE_REQUEST_WAIT_S
    while True:
        hits = listener.hits_for(token) if token else listener.hits_since(since)
        if hits or time.monotonic() >= deadline:
            return hits
        await asyncio.sleep(0.05)


async def probe(
    ctx: Context, tool: ToolSurface, listener: CanaryListener
) -> tuple[list[Finding], int]:
    """Findings for ``tool`` (one per argument that fetched) and the number of probes."""
    findings: list[Finding] = []
    probed = 0
    for name, schema in tool.properties.items():
        token: str | None = f"ocm-ssrf-{secrets.token_hex(8)}"
        if not is_string(schema):
            continue
        if recognised(name, schema, URL_NAMES, URL_WORDS, URL_FORMATS):
            value, how = listener.url(str(token)), "a URL"
        elif recognised(name, schema, HOST_NAMES, HOST_WORDS):
            token, value, how = None, f"127.0.0.1:{listener.port}", "a host"
        else:
            continue
        probed += 1
        started = time.monotonic()
        call = await probe_call(ctx.session, tool, {name: value}, CHECK)
        args = call.args
        hits = await _wait(listener, token, started)
        if not hits:
            continue
        returned = listener.page_marker in call.output()
        message = (
            f"argument {name!r} makes the server send requests where its caller says: given "
            f"{how} of the harness's loopback listener, it sent {hits[0].method} "
            f"{hits[0].path}" + (" and returned the page" if returned else "")
        )
        evidence = f"{len(hits)} request(s) to {listener.origin}: " + ", ".join(
            f"{h.method} {h.path}" for h in hits[:3]
        )
        findings.append(finding(ctx, CHECK, tool, name, message, evidence, args))
    return findings, probed
