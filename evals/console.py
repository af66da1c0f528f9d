"""The console the commands log to. Its lines never wrap: a report path or a hint split over
two lines at a CI log's 80 columns can be neither copied nor searched. Tables and progress
bars still lay out at the console's width."""

from __future__ import annotations

from rich.console import Console


def log_console(*, stderr: bool = True) -> Console:
    return Console(stderr=stderr, soft_wrap=True)
