"""The streamable-HTTP transport rules for any HTTP target, sent as plain requests (an MCP
client library would hide the status codes):

- ``origin_not_validated``: an ``initialize`` with a foreign ``Origin`` must get 403 (MUST:
  servers validate Origin on every connection against DNS rebinding; 403 when present and
  invalid);
- ``host_not_validated``: an ``initialize`` with a foreign ``Host`` should be refused (the
  other half of the DNS-rebinding defence; an error when Origin is not validated either);
- ``auth_not_enforced`` / ``www_authenticate_missing``: with ``EVALS_BEARER_TOKEN`` set
  (the server is configured for auth), a request without the token or with a wrong one must
  get 401, and a 401 MUST carry ``WWW-Authenticate``.
"""

from __future__ import annotations

import json
import os
import shlex
from typing import TypedDict
from urllib.parse import urlsplit

import httpx

from evals.run.security.findings import AUTH_ERRORS, TRANSPORT_SECURITY, Finding
from evals.run.security.registry import Context, family
from evals.run.targets import BEARER_ENV

FAMILY = "http"
FOREIGN = "evil.example"


class ClientInfo(TypedDict):
    name: str
    version: str


class InitializeParams(TypedDict):
    protocolVersion: str
    capabilities: dict[str, dict[str, bool]]  # none declared
    clientInfo: ClientInfo


class InitializeRequest(TypedDict):
    """The JSON-RPC ``initialize`` request every probe sends."""

    jsonrpc: str
    id: int
    method: str
    params: InitializeParams


INIT: InitializeRequest = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "evals-security", "version": "0"},
    },
}
BASE_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def curl(url: str, headers: dict[str, str]) -> str:
    parts = ["curl -si -X POST", shlex.quote(url)]
    parts += [f"-H {shlex.quote(f'{k}: {v}')}" for k, v in headers.items()]
    parts.append(f"-d {shlex.quote(json.dumps(INIT))}")
    return " ".join(parts)


def _finding(
    check: str,
    grade: str,
    level: str,
    message: str,
    where: str,
    url: str,
    headers: dict[str, str],
    status: int,
    reference: str,
) -> Finding:
    shown = {k: ("Bearer <token>" if k == "Authorization" else v) for k, v in headers.items()}
    return Finding(
        check=check,
        family=FAMILY,
        grade=grade,  # type: ignore[arg-type]
        level=level,  # type: ignore[arg-type]
        message=message,
        where=where,
        evidence=f"HTTP {status}",
        reference=reference,
        reproduction=curl(url, shown),
    )


async def probe(url: str, token: str | None, timeout_s: float = 10.0) -> list[Finding]:
    findings: list[Finding] = []
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(timeout=timeout_s) as http:

        async def post(headers: dict[str, str]) -> httpx.Response:
            return await http.post(url, json=INIT, headers={**BASE_HEADERS, **headers})

        origin_headers = {**auth, "Origin": f"http://{FOREIGN}"}
        origin = await post(origin_headers)
        origin_ok = origin.status_code == 403
        if origin.is_success:
            findings.append(
                _finding(
                    "origin_not_validated",
                    "spec-must",
                    "error",
                    "a request with a foreign Origin was served (servers MUST validate Origin and "
                    "answer 403 when it is present and invalid)",
                    "header Origin",
                    url,
                    origin_headers,
                    origin.status_code,
                    TRANSPORT_SECURITY,
                )
            )
        elif not origin_ok and origin.status_code != 401:
            findings.append(
                _finding(
                    "origin_not_validated",
                    "spec-must",
                    "warning",
                    f"a foreign Origin was refused with {origin.status_code}, not 403",
                    "header Origin",
                    url,
                    origin_headers,
                    origin.status_code,
                    TRANSPORT_SECURITY,
                )
            )
        host_headers = {**auth, "Host": FOREIGN}
        host = await post(host_headers)
        if host.is_success:
            findings.append(
                _finding(
                    "host_not_validated",
                    "security",
                    "warning" if origin_ok else "error",
                    "a request with a foreign Host header was served (DNS rebinding: a loopback "
                    "server should accept only its own host names)",
                    "header Host",
                    url,
                    host_headers,
                    host.status_code,
                    TRANSPORT_SECURITY,
                )
            )
        if token:
            for label, headers in (
                ("without a token", {}),
                ("with a wrong token", {"Authorization": f"Bearer {token}x"}),
            ):
                response = await post(headers)
                findings += _auth_findings(response, label, url, headers)
        else:
            response = await post({})
            if response.status_code == 401:
                findings += _auth_findings(response, "without a token", url, {})
    return findings


def _auth_findings(
    response: httpx.Response, label: str, url: str, headers: dict[str, str]
) -> list[Finding]:
    if response.is_success:
        return [
            _finding(
                "auth_not_enforced",
                "security",
                "error",
                f"auth is configured ({BEARER_ENV} set) but a request {label} was served",
                "header Authorization",
                url,
                headers,
                response.status_code,
                AUTH_ERRORS,
            )
        ]
    if response.status_code == 401 and not response.headers.get("www-authenticate"):
        return [
            _finding(
                "www_authenticate_missing",
                "spec-must",
                "error",
                f"a 401 ({label}) has no WWW-Authenticate header (servers MUST send it)",
                "header WWW-Authenticate",
                url,
                headers,
                response.status_code,
                AUTH_ERRORS,
            )
        ]
    if response.status_code != 401:
        return [
            _finding(
                "auth_not_enforced",
                "spec-must",
                "warning",
                f"a request {label} got {response.status_code}, not 401",
                "header Authorization",
                url,
                headers,
                response.status_code,
                AUTH_ERRORS,
            )
        ]
    return []


@family(
    FAMILY,
    checks=(
        "origin_not_validated",
        "host_not_validated",
        "auth_not_enforced",
        "www_authenticate_missing",
    ),
    phase="http",
)
async def check_http(ctx: Context) -> list[Finding]:
    """Origin, Host and bearer-token rules of the streamable-HTTP transport."""
    if urlsplit(ctx.spec).scheme not in ("http", "https"):
        ctx.notes.append("http: not an HTTP target; transport rules not checked")
        return []
    token = os.environ.get(BEARER_ENV) or None
    if not token:
        ctx.notes.append(f"http: {BEARER_ENV} not set, so only a 401's WWW-Authenticate is checked")
    return await probe(ctx.spec, token)
