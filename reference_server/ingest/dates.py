"""Month names and ISO dates for the ingesters (defined once in the run-time catalog)."""

from __future__ import annotations

from reference_server.catalog import MONTH, MONTH_NAMES, MONTHS, iso_date, parse_dates

__all__ = ["MONTH", "MONTHS", "MONTH_NAMES", "iso_date", "parse_dates"]
