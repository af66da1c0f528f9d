"""`DerivedValues`: one build per name, shared by every caller, even when first calls race."""

from __future__ import annotations

import threading
import time

import pytest

from reference_server.retrieval.derived import DerivedValues


def test_built_once_and_shared() -> None:
    derived = DerivedValues()
    builds: list[int] = []

    def build() -> list[int]:
        builds.append(1)
        return [1, 2, 3]

    first = derived.get("rows", build)
    assert derived.get("rows", build) is first
    assert builds == [1]
    assert derived.get("other", lambda: "x") == "x"


def test_racing_first_calls_all_get_the_kept_value() -> None:
    derived = DerivedValues()
    seen: list[object] = []

    def build() -> object:
        time.sleep(0.01)  # both threads build before either stores
        return object()

    threads = [
        threading.Thread(target=lambda: seen.append(derived.get("v", build))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(v) for v in seen}) == 1


def test_racing_first_calls_wait_for_one_build() -> None:
    derived = DerivedValues()
    builds: list[int] = []
    started = threading.Event()

    def build() -> object:
        builds.append(1)
        started.set()
        time.sleep(0.05)  # the others arrive while this build runs
        return object()

    first = threading.Thread(target=lambda: derived.get("v", build))
    first.start()
    started.wait(5)
    others = [threading.Thread(target=lambda: derived.get("v", build)) for _ in range(4)]
    for t in others:
        t.start()
    for t in [first, *others]:
        t.join()
    assert builds == [1]


def test_a_failed_build_is_tried_again() -> None:
    derived = DerivedValues()

    def fail() -> object:
        raise RuntimeError("store down")

    with pytest.raises(RuntimeError):
        derived.get("v", fail)
    assert derived.get("v", lambda: 7) == 7


def test_a_new_version_replaces_the_old_one() -> None:
    """`get_latest`: one build per version (the day), and only the latest is kept."""
    derived = DerivedValues()
    builds: list[str] = []

    def build(day: str) -> str:
        builds.append(day)
        return f"review of {day}"

    assert derived.get_latest("review", "d1", lambda: build("d1")) == "review of d1"
    assert derived.get_latest("review", "d1", lambda: build("d1")) == "review of d1"
    assert derived.get_latest("review", "d2", lambda: build("d2")) == "review of d2"
    assert builds == ["d1", "d2"]
    assert derived.members(("latest", "review")) == ["review of d2"]
    derived.get("reviewer", lambda: 1)  # a name sharing the prefix is another value
    assert derived.get_latest("review", "d2", lambda: build("again")) == "review of d2"
    assert derived.get("reviewer", lambda: 2) == 1
