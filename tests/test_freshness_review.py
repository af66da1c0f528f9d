"""opa.freshness_probe reviews the whole corpus once per process and day: the kept review, and
its restriction to a call's documents, equal a review of those documents on that day."""

from __future__ import annotations

from datetime import date

from fastmcp import FastMCP

from reference_server.retrieval.opa_freshness import all_documents
from reference_server.tools.freshness.review import review, reviewed


def test_the_kept_review_is_the_days_review(server: FastMCP) -> None:
    rt = server.runtime
    docs = all_documents(rt.opa_sql)
    early, late = date(2024, 1, 1), date(2031, 1, 1)
    first = reviewed(rt, docs, early, filtered=False, degraded=False)
    assert first == review(docs, early)
    assert reviewed(rt, docs, early, filtered=False, degraded=False) is first
    later = reviewed(rt, docs, late, filtered=False, degraded=False)
    assert later == review(docs, late)
    assert len(later.tiered) > len(first.tiered)  # seven years on, more documents are stale
    assert later.likely_stale and later.likely_stale != first.likely_stale
    some = [d for d in docs if d.source_org in ("pho", "ontario_health")]
    assert reviewed(rt, some, late, filtered=True, degraded=False) == review(some, late)
    name = "opa_freshness_probe.review"
    kept = [k for k in rt.opa_sql.derived._values if isinstance(k, tuple) and k[0] == name]
    assert kept == [(name, late)]  # the later day's review replaced the earlier one
