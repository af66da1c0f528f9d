"""Read the committed Dr. OFF corpus files the case families derive from."""

from __future__ import annotations

import csv
import functools
import json
from pathlib import Path
from typing import Any

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "reference_server" / "corpus" / "off"


class Corpus:
    """The corpus folder, each file parsed once: CSV rows as dicts of strings, JSONL as dicts."""

    def __init__(self, root: Path = DEFAULT_ROOT) -> None:
        self.root = root

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
