"""Evaluation harness: golden scenarios -> a target backend -> checks and metrics -> one run log.

Gates, reports and comparisons read the run log (``run.record.json`` + ``scenarios.jsonl``) and
never call the backend again. Entry point: ``ocm {run,gate,report,baseline}``.
"""

__all__: list[str] = []
