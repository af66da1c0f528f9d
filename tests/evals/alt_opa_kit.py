"""Shared pieces of the second OPA backend's tests (its `corpus` and `backend` fixtures are in
conftest.py): the skip without its source extracts, and answers checked against its published
schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from examples.alt_opa.corpus import data_folder
from examples.alt_opa.server import load_schemas


def skip_without_extracts() -> None:
    """Skip the calling test module when the publishers' extracts are absent."""
    if not data_folder().is_dir():
        pytest.skip(
            f"OPA source extracts not found at {data_folder()} (set ALT_OPA_DATA)",
            allow_module_level=True,
        )


def validated(tool: str, result: Mapping[str, object]) -> dict[str, Any]:
    """The answer as a dict, after checking it against the tool's published outputSchema."""
    Draft202012Validator(load_schemas()[tool]["outputSchema"]).validate(result)
    return dict(result)
