"""The one registry shape: duplicate names refused, unknown names answered with the known
ones, plug-in modules imported when the registry is first read."""

from __future__ import annotations

import sys

import pytest

from ocm_common.registry import Registry


def test_a_second_entry_under_a_taken_name_is_refused() -> None:
    things: Registry[int] = Registry("thing")
    things.add("a", 1)
    with pytest.raises(ValueError, match="thing 'a' registered twice"):
        things.add("a", 2)
    assert things["a"] == 1


def test_an_unknown_name_lists_the_available_ones() -> None:
    things: Registry[int] = Registry("thing")
    things.add("b", 1)
    things.add("a", 2)
    with pytest.raises(KeyError, match=r"Unknown thing 'c'. Available: a, b"):
        things["c"]
    assert things.unknown(["a", "c"]) == ["c"]


def test_the_decorator_registers_what_make_builds_and_returns_the_function() -> None:
    things: Registry[tuple[str, int]] = Registry("thing")

    @things.decorator("double", lambda fn: ("double", fn(2)))
    def double(x: int) -> int:
        return 2 * x

    assert double(3) == 6 and things["double"] == ("double", 4)


def test_plugins_are_imported_on_first_read_only(tmp_path, monkeypatch) -> None:
    (tmp_path / "holder_for_registry_test.py").write_text(
        "from ocm_common.registry import Registry\n"
        "THINGS = Registry('thing', plugins=('plugin_for_registry_test',))\n"
    )
    (tmp_path / "plugin_for_registry_test.py").write_text(
        "from holder_for_registry_test import THINGS\nTHINGS.add('from-plugin', 7)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import holder_for_registry_test  # type: ignore[import-not-found]

    assert "plugin_for_registry_test" not in sys.modules
    assert holder_for_registry_test.THINGS.names() == ["from-plugin"]
    assert holder_for_registry_test.THINGS["from-plugin"] == 7
    for name in ("holder_for_registry_test", "plugin_for_registry_test"):
        monkeypatch.delitem(sys.modules, name)
