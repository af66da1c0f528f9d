"""The check path language."""

from __future__ import annotations

import pytest

from evals.run.jsonpath import PathSyntaxError, is_multi, resolve

DATA = {
    "a": {"b": [{"c": 1}, {"c": 2}, {"d": 3}]},
    "items": [{"code": "A007"}, {"code": "K013"}],
    "n": None,
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("", [DATA]),
        ("$", [DATA]),
        ("a.b[0].c", [1]),
        ("a.b[-1].d", [3]),
        ("a.b[*].c", [1, 2]),
        ("$.items[*].code", ["A007", "K013"]),
        ("items[5].code", []),
        ("missing.key", []),
        ("n", [None]),
    ],
)
def test_resolve(path: str, expected: list[object]) -> None:
    assert resolve(DATA, path) == expected


def test_is_multi() -> None:
    assert is_multi("items[*].code")
    assert not is_multi("items[0].code")


@pytest.mark.parametrize("bad", ["a..b", "a[", "a[x]", "a.", "a]b", "a[0]b"])
def test_syntax_errors(bad: str) -> None:
    with pytest.raises(PathSyntaxError):
        resolve(DATA, bad)
