"""Load over stdio: `load run --target stdio:<command>` serves a stdio-only server through
fastmcp's proxy on a loopback port and measures it like any HTTP server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from load.stdio_proxy import command_argv
from ocm_cli.program import main

WELL_BEHAVED = Path(__file__).parents[1] / "fixtures" / "servers" / "well_behaved.py"
LENIENT_SLO = """
spec_ceilings: [{tools: "*", p50_ms: 60000, p95_ms: 60000}]
profiles: {latency: {p50_ms: 60000, p95_ms: 60000}}
max_errors: 0
"""
# Known-good calls of the well-behaved fixture (its notes and bounds, read from its source)
EXAMPLES = {
    "add": [{"a": 2, "b": 3}],
    "echo": [{"text": "hello"}],
    "read_note": [{"path": "welcome.txt"}, {"path": "todo.txt"}],
}


def test_a_stdio_target_names_its_command_and_python_means_this_interpreter() -> None:
    assert command_argv("stdio:python server.py --flag 'a b'") == [
        sys.executable,
        "server.py",
        "--flag",
        "a b",
    ]
    assert command_argv("stdio:node index.js") == ["node", "index.js"]
    with pytest.raises(ValueError, match="needs a command"):
        command_argv("stdio:  ")


@pytest.mark.slow
def test_load_over_stdio_measures_every_tool_without_errors(tmp_path: Path) -> None:
    examples, slo = tmp_path / "examples.json", tmp_path / "slo.yaml"
    examples.write_text(json.dumps(EXAMPLES), encoding="utf-8")
    slo.write_text(LENIENT_SLO, encoding="utf-8")  # about the round trip, not speed
    out = tmp_path / "run"
    code = main(
        [
            "load",
            "run",
            "--target",
            f"stdio:python {WELL_BEHAVED}",
            "--mix",
            f"examples:{examples}",
            "--users",
            "2",
            "--time",
            "6",
            "--slo",
            str(slo),
            "--out",
            str(out),
        ]
    )
    summary = json.loads((out / "latency.json").read_text())
    assert code == 0, summary
    assert summary["errors"] == 0, summary["failures"]
    assert set(summary["tools"]) <= set(EXAMPLES) and summary["calls"] > 0
    assert summary["warm_up"]["calls"] == 4 * len(EXAMPLES) and not summary["warm_up"]["hung"]
    assert (out / "stdio-proxy.log").exists()
