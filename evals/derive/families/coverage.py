"""coverage cases (families registered here)."""

from __future__ import annotations
