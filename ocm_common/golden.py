"""The golden scenario files as plain records, and the calls in them that expect an answer.

`evals.run.scenario` validates each record into its `Scenario` model; load and scale only
need the calls (`golden_calls`), and read them here without importing the harness. Both read
the files through `golden_files` and `raw_records`, so which files count and how a file holds
its records is decided once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ocm_common.json_types import Arguments

GOLDEN_DIR = Path(__file__).resolve().parent.parent / "golden"
SUFFIXES = (".yaml", ".yml", ".jsonl")
# `<name>.tools.yaml` beside a golden file describes its tools (evals/run/tool_descriptors.py):
# not a golden file itself.
TOOLS_SUFFIX = ".tools.yaml"


class GoldenFileError(ValueError):
    """A golden file that cannot be read; the message names the file (and the record)."""


def golden_files(root: Path) -> list[Path]:
    """``root/**/*.yaml`` (and ``.yml``, ``.jsonl``) in a stable order; ``root`` may also be one file.

    Files or folders whose name starts with ``_`` or ``.`` (templates, notes) are skipped, and
    so are tool descriptor files (``*.tools.yaml``).
    """
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise GoldenFileError(f"{root}: no such golden file or directory")
    return sorted(
        p
        for p in root.rglob("*")
        if p.suffix in SUFFIXES
        and not p.name.endswith(TOOLS_SUFFIX)
        and p.is_file()
        and not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts)
    )


def raw_records(path: Path) -> list[tuple[int | None, Any]]:
    """(position, record) of every record in one file: YAML (one record, or a list under
    ``scenarios:``; position None for a lone record) or JSON lines (position = line - 1)."""
    if path.suffix == ".jsonl":
        records: list[tuple[int | None, Any]] = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append((number - 1, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise GoldenFileError(f"{path}:{number}: not valid JSON: {exc}") from None
        return records
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise GoldenFileError(f"{path}: not valid YAML: {exc}") from None
    if data is None:
        return []
    if isinstance(data, dict) and "scenarios" in data:
        listed = data["scenarios"]
        if not isinstance(listed, list):
            raise GoldenFileError(f"{path}: field scenarios: must be a list of records")
        return list(enumerate(listed))
    if isinstance(data, dict):
        return [(None, data)]
    raise GoldenFileError(
        f"{path}: expected one scenario record or a mapping with 'scenarios:', "
        f"got {type(data).__name__}"
    )


@dataclass(frozen=True)
class GoldenCall:
    tool: str
    arguments: Arguments
    scenario: str


def golden_calls(root: Path = GOLDEN_DIR) -> list[GoldenCall]:
    """Every golden call that expects a result (not a tool error), in file order.

    A scenario whose id argument comes from the backend (``ids_from``: it asks the backend's
    search first) is not a call that can be made as written; its lookup calls are, and are
    listed in its place (``<scenario>#lookup<n>``)."""
    calls = []
    for path in golden_files(root):
        for _, raw in raw_records(path):
            if not isinstance(raw, dict) or "tool" not in raw:
                continue
            lookups = raw.get("ids_from")
            if lookups:
                for n, lookup in enumerate(lookups if isinstance(lookups, list) else [lookups]):
                    if isinstance(lookup, dict) and "tool" in lookup:
                        args = dict(lookup.get("args") or {})
                        calls.append(GoldenCall(lookup["tool"], args, f"{raw['id']}#lookup{n}"))
                continue
            checks = [e.get("check") for e in raw.get("expect") or [] if isinstance(e, dict)]
            if "tool_error" not in checks:
                calls.append(GoldenCall(raw["tool"], dict(raw.get("args") or {}), str(raw["id"])))
    return calls


def _json_or_yaml(text: str) -> Any:
    """JSON is YAML too, but PyYAML's pure-Python parser read a 27,651-call examples file in
    8.9 s (in every locust process, longer than a saturation step); `json` reads it in a few
    hundredths. YAML files go to libyaml's parser when PyYAML was built with it."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(text, Loader=loader)  # a safe loader (C or Python)


def example_calls(path: Path) -> list[GoldenCall]:
    """Known-good calls from an examples file, for a server without golden scenarios: JSON or
    YAML, either `{tool: [arguments, ...]}` or `[{tool, args}, ...]`."""
    try:
        data = _json_or_yaml(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise GoldenFileError(f"{path}: cannot read the examples: {exc}") from None
    pairs = (
        [(tool, args) for tool, many in data.items() for args in many]
        if isinstance(data, dict)
        else [(d["tool"], d.get("args") or d.get("arguments") or {}) for d in data]
    )
    return [
        GoldenCall(str(tool), dict(args), f"{path.name}#{n}")
        for n, (tool, args) in enumerate(pairs)
    ]
