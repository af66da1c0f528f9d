"""rehearsal.json's shapes (`ocm rehearsal`, scale/rehearsal.py): what the client saw per tool
through the load balancer, and which replica answered how many requests before and after the
stop."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class ToolLoad(TypedDict):
    """One tool's calls through the load balancer: how many, how many failed (and with what
    error, the first 120 characters), p50 and p95 in ms."""

    calls: int
    failures: int
    failure_kinds: dict[str, int]
    p50_ms: float
    p95_ms: float


class LoadResult(TypedDict):
    """What the client saw over the run, and when replica A was stopped (epoch seconds); the
    locust runner also names itself and its exit code (first), and its failures are -1 when
    locust wrote no statistics."""

    runner: NotRequired[str]
    exit_code: NotRequired[int]
    tools: dict[str, ToolLoad]
    calls: int
    failures: int
    rps: float
    seconds: float
    stopped_at_epoch: float


class UpstreamCounts(TypedDict):
    """Requests each replica (upstream address) answered before and after the stop, and how
    many nginx passed on to the other replica."""

    before_stop: dict[str, int]
    after_stop: dict[str, int]
    retried_by_nginx: int


class RehearsalResult(TypedDict):
    """rehearsal.json."""

    load: LoadResult
    upstreams: UpstreamCounts
    # {"A": address (stopped mid-run), "B": address}
    replicas: dict[str, str]
