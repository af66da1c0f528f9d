"""Log lines never wrap, so a report path in a CI log (80 columns, not a terminal) stays whole."""

from __future__ import annotations

import pytest

from evals.console import log_console


def test_a_long_path_is_one_line_on_a_narrow_non_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = "reports/security/latest/" + "a-rather-long-directory-name/" * 5 + "security.md"
    console = log_console()
    assert console.width <= 100  # captured stderr is not a terminal: rich's default width
    console.print(f"report: {path} (and security.json); rerun with --allow-writes to call more")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and path in err
