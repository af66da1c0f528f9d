"""`make bench BASE=<rev>`: the working tree against a base revision, on this machine, now.

base worktree + its index (load/worktree.py) -> two servers, one per checkout, one worker each
(`OCM_FAULT_*` reach the working tree's only) -> both warmed up -> the task mix (`--mix`: the
golden mix, whose ~180 calls repeat so both caches answer most of them, or
`examples:<file>` such as the distinct-query mix, each call made once per side), every
tool in turn, each call sent to both servers back to back with the same arguments, the order
alternating (working first, then base first) so a drift or a cache effect in between falls on
both sides alike -> per tool p50/p95 ratios with bootstrap intervals (load/regression.py), with
the mix and each server's stated query-embedding cache hit rate (`_meta.cache`).
With `saturation_pairs` (`make bench BASE_SATURATION=1`), the saturation profile on the same mix,
one side at a time in ABBA order, the same worker count on both (load/saturation_pair.py):
calls/s per run and the working / base ratio per pair, reported, not judged.
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
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from load.against_base_shapes import ConditionSummary, RegressionBody
from load.base_conditions import (
    CONDITION_ROUNDS,
    CONDITIONS,
    LAG,
    Condition,
    ConditionSamples,
    measure_calls,
    measure_lag,
)
from load.calibrate import DEFAULT_WORKLOAD, measure
from load.calibration import factor
from load.client import warm_up
from load.hoststat import cpu_shares, cpu_times
from load.parallel import interleaved_calls
from load.profiles import load_profiles
from load.regression import (
    CONDITION_MARGINS,
    CONDITION_RATIOS,
    Verdict,
    judge,
    table,
)
from load.run import run_profile
from load.saturation_pair import (
    SERVER_WORKERS,
    SaturationSection,
    StepBar,
    run_pairs,
    summarise,
)
from load.saturation_pair import lines as saturation_lines
from load.slo import load_slo, write_slo
from load.taskmix import TaskMix
from load.worktree import BaseTree, WorktreeError, build_index, check_imports, checkout
from ocm_common.latency_records import LatencyRecord
from ocm_common.launcher import running_server
from ocm_common.machine import describe
from ocm_common.run_record import Clock, header, write_record

ROUNDS = 100  # calls per tool and side: ~1 min on this 2-core machine
MIX = "golden"  # or examples:<file>, e.g. the distinct-query mix (load/taskmix.py from_source)
SIDES = ("working", "base")


@dataclass
class Interleaved:
    """`interleave`'s result per side: latencies per tool (pairs index-aligned per tool), the
    problems (errors, schema violations) as `tool: message`, the server's stated cache hit rate."""

    samples: dict[str, dict[str, list[float]]]
    problems: dict[str, list[str]]
    cache_hit_rate: dict[str, float | None]


def interleave(urls: dict[str, str], rounds: int, *, seed: int = 0, mix: str = MIX) -> Interleaved:
    """`rounds` calls per tool, each sent to every side. The golden mix draws its ~180 calls
    with varied free text (most repeat, so the servers' caches answer them); an examples mix
    (the distinct-query mix) walks its calls, so each call is made once on each side."""
    tasks = TaskMix.from_source(mix, seed=seed)
    calls = [(tool, tasks.pick(tool).arguments) for _ in range(rounds) for tool in tasks.tools]
    sides = interleaved_calls(urls, calls, validate=True)
    return Interleaved(
        {side: dict(s.latencies_ms) for side, s in sides.items()},
        {side: s.errors for side, s in sides.items()},
        {side: s.cache_hit_rate() for side, s in sides.items()},
    )


def side_server(
    side: str,
    base: BaseTree,
    out: Path,
    *,
    workers: int = 1,
    env: dict[str, str] | None = None,
    tag: str = "",
) -> AbstractContextManager[str]:
    """One side's server: the working tree's (its own `OCM_FAULT_*` included) or the base
    checkout's (its env drops them); `env` goes to either."""
    env = env or {}
    log = out / f"server-{side}{tag}.log"
    if side == "working":
        return running_server(workers=workers, env=env, log_path=log)
    return running_server(
        workers=workers,
        command=base.server_command(),
        cwd=base.path,
        env={**base.env(), **env},
        replace_env=True,
        log_path=log,
    )


def start_pair(
    stack: ExitStack, base: BaseTree, out: Path, condition: Condition | None = None
) -> dict[str, str]:
    """Both checkouts' servers (one worker each), warmed up; a condition's settings go to both,
    the working tree's own `OCM_FAULT_*` to its server only (the base's env drops them)."""
    env = dict(condition.env) if condition else {}
    tag = f"-{condition.name}" if condition else ""
    urls: dict[str, str] = {
        side: stack.enter_context(side_server(side, base, out, env=env, tag=tag)) for side in SIDES
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


def condition_summary(
    measured: ConditionSamples, verdict: Verdict, cpu: dict[str, float] | None
) -> ConditionSummary:
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


def compare_saturation(base: BaseTree, out: Path, mix: str, pairs: int) -> SaturationSection:
    """The saturation profile (settings from the profiles file the bench uses) on each side in
    ABBA order, a fresh server of `SERVER_WORKERS` workers per run (load/saturation_pair.py).
    Both sides get the same step bar, scaled to the machine now as `make bench` scales it (a
    reference workload timed here; load/calibration.py): on a busy machine the bar as written
    stops both sides at the first step, which compares nothing."""
    settings = load_profiles().saturation
    slo = load_slo()
    reading = measure(slo.calibration.workload if slo.calibration else DEFAULT_WORKLOAD)
    scale = factor([reading["ms"] if reading else None], slo.calibration)
    scaled = slo.scaled(scale.value)
    slo_file = write_slo(scaled, out / "slo.saturation.yaml")
    step_bar: StepBar = {
        "step_p95_ms": scaled.saturation.step_p95_ms,
        "factor": scale.value,
        "note": scale.note,
    }

    def server_for(side: str, tag: str) -> AbstractContextManager[str]:
        return side_server(side, base, out, workers=SERVER_WORKERS, tag=f"-saturation-{tag}")

    def run_saturation(url: str, run_dir: Path) -> tuple[int, dict[str, Any]]:
        done = run_profile(
            "saturation", url, run_dir, settings, quiet=True, mix=mix, slo_file=slo_file
        )
        return done.exit_code, done.summary

    runs = run_pairs(server_for, run_saturation, out, pairs=pairs)
    return summarise(runs, workers=SERVER_WORKERS, profile=settings, mix=mix, step_bar=step_bar)


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
    mix: str = MIX,
    saturation_pairs: int = 0,
    render_report: Callable[[Path], int] | None = None,
) -> int:
    """`render_report` (the eval harness's, given by `ocm bench`) writes regression.md/.html
    from the record; without it the record is complete and the report is left to
    `ocm report`."""
    started = time.monotonic()
    clock = Clock()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    summary: RegressionBody = {
        "timestamp": stamp,
        "kind": "regression",
        "base_rev": rev,
        "machine": describe(),
        "rounds": rounds,
        "mix": mix,
        "condition_rounds": condition_rounds if conditions else 0,
        "harness_errors": [],
    }
    out = (out_root / "bench" / f"{stamp}-base").resolve()
    code = 2
    try:
        steps = 4 + (len(CONDITIONS) if conditions else 0) + (1 if saturation_pairs else 0)
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
        measured: list[tuple[ConditionSamples, dict[str, float] | None]] = []
        with ExitStack() as stack:
            urls = start_pair(stack, base, out)
            print(
                f"[3/{steps}] {rounds} interleaved calls per tool and side, mix {mix}", flush=True
            )
            host_before = cpu_times()
            plain = interleave(dict(urls), rounds, mix=mix)
            samples, problems = plain.samples, plain.problems
            summary["machine_cpu"] = cpu_shares(host_before, cpu_times())
            summary["cache_hit_rate"] = plain.cache_hit_rate
        first_condition_step = 4
        if saturation_pairs:
            print(
                f"[4/{steps}] saturation, {saturation_pairs} pair(s) in ABBA order, "
                f"{SERVER_WORKERS} workers per side, one side at a time",
                flush=True,
            )
            before = cpu_times()
            summary["saturation"] = compare_saturation(base, out, mix, saturation_pairs)
            summary["saturation"]["machine_cpu"] = cpu_shares(before, cpu_times())
            print("\n".join(saturation_lines(summary["saturation"])))
            first_condition_step = 5
        for step, condition in enumerate(
            CONDITIONS if conditions else (), start=first_condition_step
        ):
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
        print(
            f"mix {mix}; server cache hit rate working {plain.cache_hit_rate['working']}, "
            f"base {plain.cache_hit_rate['base']}"
        )
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
        settings={
            "base_rev": rev,
            "rounds": rounds,
            "conditions": conditions,
            "mix": mix,
            "saturation_pairs": saturation_pairs,
        },
        machine=summary["machine"],
    )
    write_record(
        out,
        head,
        summary,
        files=sorted(
            [p.name for p in out.glob("*.log")]
            + [p.name for p in out.glob("saturation-*") if p.is_dir()]
        ),
    )
    if render_report is None:
        print(f"the record is complete; its report: ocm report --run {out}")
    elif render_report(out) != 0:
        print("the regression report could not be rendered (the record is complete)")
    latest = out_root / "latest"
    shutil.rmtree(latest, ignore_errors=True)
    shutil.copytree(out, latest)
    print(f"\nreports: {out} (copied to {latest}); exit {code}")
    return code
