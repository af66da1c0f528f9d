"""The multi-replica rehearsal: two replicas sharing one Chroma server behind nginx; one
replica stopped mid-run and the client sees no failed call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ocm_cli.program import main
from scale.procs import chroma_binary
from scale.rehearsal import nginx_binary, upstream_counts


# A load run with extra server processes: `make test-load` (and `make rehearsal`), not the default suite.
@pytest.mark.slow
@pytest.mark.load
@pytest.mark.timeout(600)
@pytest.mark.skipif(nginx_binary() is None, reason="nginx is not installed (apt-get install nginx)")
@pytest.mark.skipif(chroma_binary() is None, reason="the `chroma` command is not installed")
def test_two_replicas_behind_nginx_lose_no_call_when_one_stops(tmp_path: Path) -> None:
    code = main(["rehearsal", "--clients", "4", "--seconds", "12", "--out", str(tmp_path)])
    result = json.loads((tmp_path / "rehearsal.json").read_text())
    assert code == 0 and result["load"]["failures"] == 0, result["load"]
    assert result["load"]["calls"] > 0
    before, after = result["upstreams"]["before_stop"], result["upstreams"]["after_stop"]
    assert len(before) == 2, f"both replicas should answer before the stop: {before}"
    survivor = result["replicas"]["B"]
    assert after.get(survivor, 0) > sum(v for k, v in after.items() if k != survivor)


def test_upstream_counts_reads_retries_from_the_access_log(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    log.write_text(
        "100.0|200|127.0.0.1:1|200|0.01\n"
        "101.0|200|127.0.0.1:2|200|0.01\n"
        "105.0|200|127.0.0.1:1, 127.0.0.1:2|502, 200|0.02\n"
        "106.0|200|127.0.0.1:2|200|0.01\n"
    )
    counts = upstream_counts(log, stopped_at=104.0)
    assert counts == {
        "before_stop": {"127.0.0.1:1": 1, "127.0.0.1:2": 1},
        "after_stop": {"127.0.0.1:2": 2},
        "retried_by_nginx": 1,
    }
