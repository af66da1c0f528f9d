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


def test_the_advice_names_ten_provenance_issues_and_counts_the_rest() -> None:
    from reference_server.tools.freshness.report import (
        ADVISED_ISSUES,
        Checked,
        ProvenanceIssue,
        advice,
    )
    from reference_server.tools.freshness.review import Review

    def issue(n: int) -> ProvenanceIssue:
        return ProvenanceIssue(
            document_id=f"doc-{n}",
            title=f"Document {n}",
            source_org="pho",
            source_url=f"https://example.org/{n}",
            facts=4,
            unverified_facts=["a fact"],
            stale_source_facts=[],
            oldest_source_seen=None,
        )

    checked = Checked([], Review([], []), None, degraded=False, pages=[], web_off=False)
    for count, named, summary in [
        (ADVISED_ISSUES, ADVISED_ISSUES, 0),
        (ADVISED_ISSUES + 3, ADVISED_ISSUES, 1),
    ]:
        lines = advice(checked, [], [issue(n) for n in range(count)], [])
        assert sum(line.startswith("Re-verify 'Document") for line in lines) == named
        more = [line for line in lines if line.startswith("Re-verify the facts of")]
        assert more == (
            ["Re-verify the facts of 3 more document(s) listed under provenance_issues."]
            if summary
            else []
        )
