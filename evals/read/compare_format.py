"""How the compare report and its sections write a p-value and a time in milliseconds."""

from __future__ import annotations


def p_text(value: float) -> str:
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def ms_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
