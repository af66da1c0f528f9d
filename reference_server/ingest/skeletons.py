"""Write one derived OPA corpus record: refresh the authored file, or draft a skeleton.

The OPA ingesters (cpso, cep, pho) derive facts for documents whose text is written by hand.
A document that already has an authored `<out>/<id>.yaml` only gets its derived facts
refreshed (its text is kept); any other document gets a skeleton under `<out>/_skeletons/`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml

# The derived facts of one document: each ingester's own record type (its keys are the corpus
# format's, corpus/FORMAT.md). An authored file, read back, is YAML as loaded (`dict[str, Any]`).
Facts = TypeVar("Facts", bound=Mapping[str, object])


def safe_dump(record: Mapping[str, object]) -> str:
    """YAML text for one corpus record, keys in record order."""
    return yaml.safe_dump(record, sort_keys=False, allow_unicode=True, width=100)


class _LiteralDumper(yaml.SafeDumper):
    """Safe dumper writing multi-line texts as literal blocks, so authored prose stays readable."""


def _literal_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_LiteralDumper.add_representer(str, _literal_str)


def literal_dump(record: Mapping[str, object]) -> str:
    """YAML text for one corpus record, multi-line texts as literal blocks (authored documents)."""
    return yaml.dump(record, Dumper=_LiteralDumper, sort_keys=False, allow_unicode=True, width=100)


def refresh_facts(
    existing: dict[str, Any], facts: Mapping[str, object], keys: Iterable[str]
) -> dict[str, Any]:
    """`existing` with the non-empty `facts` values of `keys` written over it."""
    merged = dict(existing)
    for key in keys:
        if facts.get(key):
            merged[key] = facts[key]
    return merged


def write_record(
    out_dir: Path,
    facts: Facts,
    merge: Callable[[Any, Facts], Mapping[str, object]],
    *,
    skeleton: Mapping[str, object] | None = None,
    dump: Callable[[Mapping[str, object]], str] = safe_dump,
) -> Path:
    """Write `merge(authored, facts)` over `<out_dir>/<id>.yaml` when that file exists, else
    `skeleton` (default: `facts`) to `<out_dir>/_skeletons/<id>.yaml`; return the path written."""
    target = out_dir / f"{facts['document_id']}.yaml"
    record: Mapping[str, object]
    if target.exists():
        record = merge(yaml.safe_load(target.read_text(encoding="utf-8")), facts)
    else:
        target = out_dir / "_skeletons" / target.name
        target.parent.mkdir(exist_ok=True)
        record = facts if skeleton is None else skeleton
    target.write_text(dump(record), encoding="utf-8")
    return target
