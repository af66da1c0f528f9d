"""Durations the way locust users write them: `20s`, `1m30s`, `2h`, or bare seconds (`90`).

Every command that takes a time (`make load TIME=`, `ocm load run --time`, the scale
runs' `--seconds`) reads it here, so one spelling works everywhere and a typo is refused with
the accepted forms named.
"""

from __future__ import annotations

import argparse
import re

_PART = re.compile(r"(\d+(?:\.\d+)?)(h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0}


def parse_duration(text: str | float) -> float:
    """Seconds in `text`; raises ValueError naming the accepted forms."""
    if isinstance(text, int | float):
        seconds: float | None = float(text)
    else:
        value = text.strip().lower()
        try:
            seconds = float(value)
        except ValueError:
            parts = _PART.findall(value)
            units = [u for _, u in parts]
            whole = "".join(n + u for n, u in parts) == value
            seconds = (
                sum(float(n) * _UNIT_S[u] for n, u in parts)
                if parts and whole and len(set(units)) == len(units)
                else None
            )
    if seconds is None or seconds < 0:
        raise ValueError(f"not a duration: {text!r} (write 20s, 1m30s, 2h or bare seconds)")
    return seconds


def duration_arg(text: str) -> float:
    """`type=` for argparse: seconds, or an argparse error naming the accepted forms."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def locust_time(seconds: float) -> str:
    """Seconds as locust's `--run-time` wants them (whole seconds, at least one)."""
    return f"{max(1, round(seconds))}s"
