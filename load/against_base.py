"""`make bench BASE=<rev>`: the working tree against a base revision, on this machine, now.

base worktree + its index (load/worktree.py) -> two servers, one per checkout, one worker each
(`OCM_FAULT_*` reach the working tree's only) -> both warmed up -> the golden task mix, every
tool in turn, each call sent to both servers back to back with the same arguments, the order
alternating (working first, then base first) so a drift or a cache effect in between falls on
both sides alike -> per tool p50/p95 ratios with bootstrap intervals (load/regression.py).
Then, unless `--no-conditions`, the concurrency conditions (load/base_conditions.py), each on a
pair of its own with its settings on both sides: a cheap call beside slow ones whose paths do
blocking work, the same latency on both paths, a small whole-tool budget -> per
condition and tool paired ratios, judged with the condition's margin ->
`reports/bench/<timestamp>-base-<sha12>/` (`regression.record.json`, the run record, and
`bench.md` / `bench.html` rendered from it by `evals report`; the servers' logs), copied to
`reports/latest/`.

What holds on any machine is checked too, on the working tree's calls: no errors, every
answer valid against its published outputSchema, p50/p95 within the spec ceilings. The tight
bars of `load/slo.yaml` are not used here: both sides run on the same machine in the same
minutes, so the base is the bar.

Exit 0: no tool slower beyond the margin (plain or under a condition) and nothing hard failed;
1: a tool slower (named, with its ratio and the condition) or a hard failure; 2: a step could
not run (worktree, index, a server, too few calls, a condition with nothing to judge).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from load.base_conditions import (
    CONDITION_ROUNDS,
    CONDITIONS,
    LAG,
    Condition,
    ConditionSamples,
    measure_calls,
    measure_lag,
)
from load.client import warm_up
from load.hoststat import cpu_shares, cpu_times
from load.parallel import interleaved_calls
from load.regression import CONDITION_MARGINS, CONDITION_RATIOS, Verdict, judge, table
from load.slo import load_slo
from load.taskmix import TaskMix
from load.worktree import BaseTree, WorktreeError, build_index, check_imports, checkout
from ocm_common.latency_records import LatencyRecord
from ocm_common.launcher import running_server
from ocm_common.machine import describe
from ocm_common.run_record import Clock, header, write_record

ROUNDS = 100  # calls per tool and side: ~1 min on this 2-core machine
SIDES = ("working", "base")


def interleave(
    urls: dict[str, str], rounds: int, *, seed: int = 0
) -> tuple[dict[str, dict[str, list[float]]], dict[str, list[str]]]:
    """Per side and tool the latencies of `rounds` calls per tool; per side the problems
    (errors, schema violations) as `tool: message`. Pairs are index-aligned per tool."""
    mix = TaskMix.from_golden(seed=seed)
    calls = [(tool, mix.pick(tool).arguments) for _ in range(rounds) for tool in mix.tools]
    sides = interleaved_calls(urls, calls, validate=True)
    return (
        {side: dict(s.latencies_ms) for side, s in sides.items()},
        {side: s.errors for side, s in sides.items()},
    )


def start_pair(
    stack: ExitStack, base: BaseTree, out: Path, condition: Condition | None = None
) -> dict[str, str]:
    """Both checkouts' servers (one worker each), warmed up; a condition's settings go to both,
    the working tree's own `OCM_FAULT_*` to its server only (the base's env drops them)."""
    env = dict(condition.env) if condition else {}
    tag = f"-{condition.name}" if condition else ""
    urls: dict[str, str] = {
        "working": stack.enter_context(
            running_server(workers=1, env=env, log_path=out / f"server-working{tag}.log")
        ),
        "base": stack.enter_context(
            running_server(
                workers=1,
                command=base.server_command(),
                cwd=base.path,
                env={**base.env(), **env},
                replace_env=True,
                log_path=out / f"server-base{tag}.log",
            )
        ),
    }
    for url in urls.values():
        warm_up(url, rounds=1 if env else 4)  # a delayed call costs its delay
    return urls


def judge_condition(measured: ConditionSamples) -> Verdict:
    return judge(
        measured.pairs,
        margin=CONDITION_MARGINS[measured.condition.name],
        ratios=CONDITION_RATIOS,
        unjudged=measured.unjudged,
    )


def condition_summary(measured: ConditionSamples, verdict: Verdict, cpu: Any) -> dict[str, Any]:
    c = measured.condition
    return {
        "title": c.title,
        "env": c.env,
        "regression": verdict.to_json(),
        "problems": measured.problems,
        "measurements": measured.measurements,
        "machine_cpu": cpu,
        "samples_ms": {
            subject: {"working": [round(x, 2) for x in w], "base": [round(x, 2) for x in b]}
            for subject, (w, b) in measured.pairs.items()
        },
    }


def _ceiling_misses(samples: dict[str, list[float]]) -> list[str]:
    slo = load_slo()
    misses = []
    for tool, xs in sorted(samples.items()):
        record = LatencyRecord.from_samples("base-compare", tool, xs)
        for metric, bound in slo.ceiling(tool).items():
            actual = getattr(record, metric)
            if actual > bound:
                misses.append(f"{tool} {metric} {actual:g} > spec ceiling {bound:g}")
    return misses


def run_against_base(
    rev: str,
    out_root: Path,
    *,
    rounds: int = ROUNDS,
    conditions: bool = True,
    condition_rounds: int = CONDITION_ROUNDS,
) -> int:
    started = time.monotonic()
    clock = Clock()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    summary: dict[str, Any] = {
        "timestamp": stamp,
        "kind": "regression",
        "base_rev": rev,
        "machine": describe(),
        "rounds": rounds,
        "condition_rounds": condition_rounds if conditions else 0,
        "harness_errors": [],
    }
    out = (out_root / "bench" / f"{stamp}-base").resolve()
    code = 2
    try:
        steps = 7 if conditions else 4
        print(f"[1/{steps}] base worktree for {rev}", flush=True)
        base = checkout(rev)
        summary["base_sha"] = base.sha
        out = out.with_name(f"{stamp}-base-{base.sha[:12]}")
        out.mkdir(parents=True, exist_ok=True)
        print(f"      {base.path}; checking which code it imports, building its index", flush=True)
        check_imports(base)
        build_index(base, out / "base-index.log")
        print(
            f"[2/{steps}] starting both servers (one worker each) and warming them up", flush=True
        )
        measured: list[tuple[ConditionSamples, Any]] = []
        with ExitStack() as stack:
            urls = start_pair(stack, base, out)
            print(f"[3/{steps}] {rounds} interleaved calls per tool and side", flush=True)
            host_before = cpu_times()
            samples, problems = interleave(dict(urls), rounds)
            summary["machine_cpu"] = cpu_shares(host_before, cpu_times())
        for step, condition in enumerate(CONDITIONS if conditions else (), start=4):
            print(f"[{step}/{steps}] {condition.name}: {condition.title}; both servers", flush=True)
            with ExitStack() as stack:
                urls = start_pair(stack, base, out, condition)
                before = cpu_times()
                m = (
                    measure_lag(urls, condition_rounds)
                    if condition is LAG
                    else measure_calls(condition, urls, condition_rounds)
                )
                measured.append((m, cpu_shares(before, cpu_times())))
        print(f"[{steps}/{steps}] verdict", flush=True)
        pairs = {t: (samples["working"][t], samples["base"][t]) for t in samples["working"]}
        verdict = judge(pairs)
        hard = [f"error: {p}" for p in problems["working"]]
        hard += [f"spec ceiling: {m}" for m in _ceiling_misses(samples["working"])]
        summary["regression"] = verdict.to_json()
        summary["hard_failures"] = hard
        summary["base_problems"] = problems["base"]
        summary["samples_ms"] = {
            side: {t: [round(x, 2) for x in xs] for t, xs in by_tool.items()}
            for side, by_tool in samples.items()
        }
        print(table(verdict))
        summary["conditions"] = {}
        flagged: list[str] = []
        for m, cpu in measured:
            v = judge_condition(m)
            summary["conditions"][m.condition.name] = condition_summary(m, v, cpu)
            print(table(v, f"{m.condition.name} ({m.condition.title})"))
            flagged += [f"{t.tool} under {m.condition.name}" for t in v.slower]
            if not v.tools or all(t.note for t in v.tools):
                summary["harness_errors"].append(
                    f"condition {m.condition.name}: nothing to judge "
                    f"({'; '.join(f'{t.tool}: {t.note}' for t in v.tools[:3])})"
                )
        summary["slower_under_conditions"] = flagged
        if problems["base"]:
            print(f"the base answered {len(problems['base'])} call(s) with an error (not judged)")
        if hard:
            print("hard failures (working tree):\n  " + "\n  ".join(hard[:20]))
        code = 1 if verdict.slower or hard or flagged else 0
        if not verdict.tools or all(t.note for t in verdict.tools):
            summary["harness_errors"].append("too few calls to judge any tool")
        if summary["harness_errors"]:
            code = 2
    except (WorktreeError, RuntimeError, TimeoutError, OSError) as exc:
        print(f"\nbench BASE={rev} could not run: {type(exc).__name__}: {exc}", file=sys.stderr)
        summary["harness_errors"].append(f"{type(exc).__name__}: {exc}")
        code = 2
    except KeyboardInterrupt:
        summary["harness_errors"].append("interrupted")
        code = 130
    summary["exit_code"] = code
    summary["elapsed_s"] = round(time.monotonic() - started, 1)
    head = header(
        "regression",
        clock,
        code,
        target=f"working tree vs {rev}",
        settings={"base_rev": rev, "rounds": rounds, "conditions": conditions},
        machine=summary["machine"],
    )
    write_record(out, head, summary, files=sorted(p.name for p in out.glob("*.log")))
    if subprocess.call([sys.executable, "-m", "evals", "report", "--run", str(out)]) != 0:
        print("the regression report could not be rendered (the record is complete)")
    latest = out_root / "latest"
    shutil.rmtree(latest, ignore_errors=True)
    shutil.copytree(out, latest)
    print(f"\nreports: {out} (copied to {latest}); exit {code}")
    return code
