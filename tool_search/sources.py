"""Catalogue sources: a spec string -> the tools it offers, as wire-format tool definitions.

Specs (each may be prefixed `NAME=` to choose the server part of the tool ids):
- `inprocess`: the reference server built in this process (its `tools/list`, no index needed);
- `stdio:<command line>`: an MCP server started as a subprocess;
- `http(s)://.../mcp`: a streamable-HTTP MCP server;
- `distractors:<n>[:<seed>]`: the generated catalogue of plausible tools (`distractors.py`);
- a path to a tool-definition file: MCP `tools/list` JSON (`inputSchema`), Anthropic `tools`
  JSON (`input_schema`) or OpenAI function JSON (`parameters`, bare or under `function`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ocm_common.json_types import JsonObject
from tool_search.examples import MAX_EXAMPLES
from tool_search.records import ToolRecord, catalogue_example

REFERENCE_SERVER = "reference"
_NAME_PREFIX = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]{0,63})=(?P<rest>.+)$")


class SourceError(ValueError):
    """A catalogue spec that cannot be read (unknown form, unreadable file, unreachable server)."""


@dataclass
class Catalogue:
    """The tools of one source, before categories are assigned."""

    spec: str
    server: str
    tools: list[ToolRecord]


def _split_name(spec: str) -> tuple[str | None, str]:
    match = _NAME_PREFIX.match(spec)
    if match and not spec.startswith(("http://", "https://", "stdio:")):
        return match["name"], match["rest"]
    return None, spec


def tool_from_definition(entry: JsonObject, server: str, source: str) -> ToolRecord:
    """One tool definition in any of the three formats -> a record."""
    body = entry.get("function") if isinstance(entry.get("function"), dict) else entry
    if not isinstance(body, dict) or not body.get("name"):
        raise SourceError(f"{source}: a tool definition without a name: {str(entry)[:120]}")
    schema = (
        body.get("inputSchema")
        or body.get("input_schema")
        or body.get("parameters")
        or {"type": "object", "properties": {}}
    )
    if not isinstance(schema, dict):
        raise SourceError(f"{source}: tool {body['name']!r} has a schema that is not an object")
    examples = body.get("examples") or body.get("input_examples") or []
    found = body.get("annotations")
    annotations = found if isinstance(found, dict) else {}
    listed = examples if isinstance(examples, list) else []
    given = [e for e in listed if isinstance(e, dict)][:MAX_EXAMPLES]
    try:
        shown = [catalogue_example(e, source) for e in given]
    except KeyError:
        raise SourceError(
            f"{source}: tool {body['name']!r} has an example with arguments but no source"
        ) from None
    except TypeError as exc:
        raise SourceError(f"{source}: tool {body['name']!r}: {exc}") from None
    # a title or an outputSchema of another JSON type counts as absent (both are optional)
    title = body.get("title") or annotations.get("title")
    output_schema = body.get("outputSchema")
    return ToolRecord(
        server=server,
        name=str(body["name"]),
        title=title if isinstance(title, str) else None,
        description=str(body.get("description") or ""),
        input_schema=schema,
        output_schema=output_schema if isinstance(output_schema, dict) else None,
        annotations=dict(annotations),
        examples=shown,
        source=source,
    )


def read_definition_file(path: Path, server: str | None = None) -> Catalogue:
    """A tool-definition file: a list of tools, or an object with `tools` (or `functions`)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SourceError(f"cannot read tool definitions from {path}: {exc}") from None
    meta: JsonObject = data if isinstance(data, dict) else {}
    entries = data if isinstance(data, list) else meta.get("tools") or meta.get("functions")
    if not isinstance(entries, list):
        raise SourceError(f"{path}: expected a list of tools or an object with 'tools'")
    name = server or str(meta.get("server") or path.stem)
    tools = [tool_from_definition(e, name, str(path)) for e in entries if isinstance(e, dict)]
    return Catalogue(str(path), name, tools)


async def _list_live(client: Any) -> tuple[str | None, list[JsonObject]]:
    async with client:
        tools = await client.list_tools()
        info = getattr(client, "initialize_result", None)
        server_info = getattr(info, "serverInfo", None) or getattr(info, "server_info", None)
        name = getattr(server_info, "name", None)
    return name, [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def _live_client(spec: str) -> Any:
    from fastmcp import Client

    if spec == "inprocess":
        from reference_server.config import Settings
        from reference_server.server import build_server

        return Client(build_server(Settings.from_env()))
    if spec.startswith("stdio:"):
        from fastmcp.client.transports import StdioTransport

        argv = shlex.split(spec.removeprefix("stdio:"))
        if not argv:
            raise SourceError("stdio: needs a command line")
        # `python` means this interpreter, as for the harness's stdio targets (its virtualenv)
        command = sys.executable if argv[0] in ("python", "python3") else argv[0]
        return Client(StdioTransport(command, argv[1:], env=dict(os.environ), keep_alive=False))
    from fastmcp.client.transports import StreamableHttpTransport

    return Client(StreamableHttpTransport(spec))


def read_live(spec: str, server: str | None = None, timeout_s: float = 60.0) -> Catalogue:
    """The tools a live MCP server lists."""
    try:
        reported, entries = asyncio.run(
            asyncio.wait_for(_list_live(_live_client(spec)), timeout=timeout_s)
        )
    except SourceError:
        raise
    except Exception as exc:  # unreachable server, protocol error, timeout
        raise SourceError(f"cannot list the tools of {spec}: {type(exc).__name__}: {exc}") from None
    default = REFERENCE_SERVER if spec == "inprocess" else reported or "server"
    name = server or default
    return Catalogue(spec, name, [tool_from_definition(e, name, spec) for e in entries])


def check_spec(spec: str) -> None:
    """Raise SourceError for a spec that names no kind of source or a missing file (without
    reading it: a live server is only asked for its tools later)."""
    _, rest = _split_name(spec.strip())
    if rest == "inprocess" or rest.startswith(("stdio:", "http://", "https://", "distractors:")):
        return
    if not Path(rest).is_file():
        raise SourceError(
            f"unknown catalogue {spec!r}: expected inprocess, stdio:<cmd>, http(s)://..., "
            "distractors:<n>[:<seed>] or a tool-definition file"
        )


def read_source(spec: str) -> Catalogue:
    """One spec -> its catalogue."""
    server, rest = _split_name(spec.strip())
    if rest == "inprocess" or rest.startswith(("stdio:", "http://", "https://")):
        return read_live(rest, server)
    if rest.startswith("distractors:"):
        from tool_search.distractors import distractor_catalogue

        parts = rest.split(":")
        try:
            count = int(parts[1])
            seed = int(parts[2]) if len(parts) > 2 else 0
        except (IndexError, ValueError):
            raise SourceError(f"{spec}: expected distractors:<n>[:<seed>]") from None
        return distractor_catalogue(count, seed, server or "generated")
    path = Path(rest)
    if not path.is_file():
        raise SourceError(
            f"unknown catalogue {spec!r}: expected inprocess, stdio:<cmd>, http(s)://..., "
            "distractors:<n>[:<seed>] or a tool-definition file"
        )
    return read_definition_file(path, server)


def read_sources(specs: list[str]) -> list[Catalogue]:
    """Every spec's catalogue; a server name used twice gets a numeric suffix, so tool ids
    (`server/tool`) stay unique across sources."""
    catalogues = [read_source(spec) for spec in specs]
    seen: dict[str, int] = {}
    for catalogue in catalogues:
        base = catalogue.server
        seen[base] = seen.get(base, 0) + 1
        if seen[base] > 1:
            catalogue.server = f"{base}-{seen[base]}"
            for tool in catalogue.tools:
                tool.server = catalogue.server
        names = [t.name for t in catalogue.tools]
        if len(set(names)) != len(names):
            raise SourceError(f"{catalogue.spec}: the same tool name is listed twice")
    return catalogues
