"""The eval harness's steps handed to the bench (load/bench.py's `BenchSteps`): `ocm` is the one
place that imports both load and evals, so the bench calls the golden eval, the gate and the
report as Python functions, never as command lines."""

from __future__ import annotations

from load.bench import BenchSteps


def eval_steps() -> BenchSteps:
    """The gate's target, the golden eval + gate and the report renderer, from evals/steps.py."""
    from evals.steps import gate_target, golden_eval_and_gate, report_or_code

    return BenchSteps(
        gate_target=gate_target(),
        eval_and_gate=golden_eval_and_gate,
        render_report=report_or_code,
    )
