"""Month names and ISO dates for the ingesters that read dates out of source text.

`MONTH` is a regex fragment matching an English month name as printed ("March"); compile with
`re.I` to accept any case. `iso_date` turns the matched pieces into 'YYYY-MM-DD'.
"""

from __future__ import annotations

MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
MONTHS = {m.lower(): i for i, m in enumerate(MONTH_NAMES, start=1)}
MONTH = f"(?:{'|'.join(MONTH_NAMES)})"


def iso_date(year: str, month: str | None, day: int = 1) -> str:
    """('2014', 'December') -> '2014-12-01'; a missing or unknown month counts as January."""
    return f"{year}-{MONTHS.get((month or '').lower(), 1):02d}-{day:02d}"
