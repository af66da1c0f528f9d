"""`make bench`: the whole benchmark in one bounded, self-cleaning sequence.

server (all workers) -> latency, paced, saturation -> saturation again on one worker (the
scaling ratio) -> parallel guarantees (their own server configurations) -> in-process
pytest-benchmark -> golden eval + gate -> `reports/bench/<timestamp>/` and `reports/latest/`
(`summary.json`, `summary.md`, `latency.jsonl`, locust CSV and HTML, the eval run log).
Every server it starts is stopped, also on failure or Ctrl-C. Exit 0 only if every SLO and
the gate passed; 1 if a target or the gate missed; 2 if a step could not run.

The verdict is the bench's, not its parts': the reference workload is timed at the start and
the end (load/calibrate.py), the tight bars are scaled by the factor (load/calibration.py) and
every latency record is judged here against the scaled bars, raw and scaled side by side in
the summary. Locust runs get the bars as scaled at the start (the saturation step bar needs
one before the run); their exit code 1 (a miss) is re-judged here, any other is a harness
failure. The in-process pytest-benchmark gets the hard bars only (`LOAD_SLO_FILE`), so its
exit code 1 means a tool failed or a spec ceiling missed, never a machine-dependent bar.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from load.calibrate import DEFAULT_WORKLOAD, measure
from load.calibration import Factor, factor
from load.hoststat import cpu_shares, cpu_times
from load.parallel import run_parallel
from load.profiles import load_profiles
from load.records import RECORDS_FILE, read_records
from load.run import run_profile
from load.slo import (
    SLO_FILE_ENV,
    Miss,
    Slo,
    evaluate,
    evaluate_cpu_per_call,
    evaluate_saturation,
    load_slo,
    miss_table,
    write_slo,
)
from ocm_common.launcher import cpu_seconds, running_server
from ocm_common.percentiles import DEFINITION
from reference_server.config import PROJECT_ROOT, default_http_workers
from reference_server.machine import describe, lacking, one_line, relevant_flags

# `make bench` passes the Makefile's GATE_TARGET (pinned date, generous timeouts); this default
# is the same for a direct `python -m load bench`.
GATE_TARGET = os.environ.get(
    "GATE_TARGET",
    "inprocess:as_of_date=2026-11-25,sql_timeout_ms=5000,vector_timeout_ms=5000,"
    "tool_timeout_ms=10000",
)
STEPS = 9  # the progress() calls that start a step in run_bench
LOCUST_PROFILES = ("latency", "paced", "saturation")
# locust's exit codes that are a verdict (re-judged here with the scaled bars); others: harness
VERDICT_CODES = (0, 1)
# the profiles whose tight bars are shown raw and scaled per tool
TIGHT_PROFILES = ("latency", "paced", "inprocess")


class Progress:
    def __init__(self) -> None:
        self.start = time.monotonic()
        self.step = 0

    def __call__(self, message: str, *, new_step: bool = True) -> None:
        if new_step:
            self.step += 1
        prefix = f"[{self.step}/{STEPS}]" if new_step else "     "
        print(f"\n{prefix} {time.monotonic() - self.start:5.0f}s  {message}", flush=True)


def _python(*args: str, env: dict[str, str] | None = None) -> int:
    return subprocess.call(
        [sys.executable, *args], cwd=PROJECT_ROOT, env={**os.environ, **(env or {})}
    )


def _cpu_per_call(summary: dict[str, Any], cpu_s: float) -> None:
    """Server CPU per call (all its processes): what a call costs whatever else the machine runs
    (includes the warm-up calls, so it errs high)."""
    calls = summary.get("calls") or 0
    summary["server_cpu_s"] = round(cpu_s, 2)
    summary["server_cpu_ms_per_call"] = round(cpu_s * 1000 / calls, 2) if calls else None


def _machine(workload: str) -> dict[str, Any]:
    """Cores, load and the reference workload's time (load/calibrate.py): a miss measured while
    the machine ran its fixed work slower than usual is the machine's as much as the server's."""
    load1, load5, _ = os.getloadavg()
    reference = measure(workload)
    return {
        "cores": os.cpu_count(),
        "load_avg_1m": round(load1, 2),
        "load_avg_5m": round(load5, 2),
        "reference_ms": reference["ms"] if reference else None,
        "reference": reference,
    }


def _workload(slo: Slo) -> str:
    return slo.calibration.workload if slo.calibration else DEFAULT_WORKLOAD


def _factor(slo: Slo, *machines: dict[str, Any] | None) -> Factor:
    return factor([(m or {}).get("reference_ms") for m in machines], slo.calibration)


def run_bench(out_root: Path) -> int:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = (out_root / "bench" / stamp).resolve()
    out.mkdir(parents=True, exist_ok=True)
    profiles = load_profiles()
    slo = load_slo()
    workers = default_http_workers()
    progress = Progress()
    summary: dict[str, Any] = {
        "timestamp": stamp,
        "machine": describe(),
        "machine_at_start": _machine(_workload(slo)),
        "server_workers": workers,
        "profiles": {},
        "harness_errors": [],
    }
    at_start = _factor(slo, summary["machine_at_start"])
    print(f"calibration at the start: factor {at_start.value:g} ({at_start.note})")
    slo_start = write_slo(slo.scaled(at_start.value), out / "slo.start.yaml")
    slo_hard = write_slo(slo.hard_only(), out / "slo.hard.yaml")
    codes: dict[str, int] = {}
    raw_codes: dict[str, int] = {}
    try:
        progress(f"starting the reference server with {workers} workers")
        with running_server(workers=workers, log_path=out / "server.log") as url:
            for name in ("latency", "paced", "saturation"):
                settings = getattr(profiles, name)
                progress(f"{name} profile ({settings.time_s:.0f} s) against {url}")
                cpu_before = cpu_seconds(url.pid)
                run = run_profile(name, url, out, settings, quiet=True, slo_file=slo_start)
                raw_codes[name] = run.exit_code
                codes[name] = 0 if run.exit_code in VERDICT_CODES else run.exit_code
                summary["profiles"][name] = run.summary
                _cpu_per_call(run.summary, cpu_seconds(url.pid) - cpu_before)
            progress("parallel profile: (c) on this server, (a), (b), (d) on their own")

            def factory(env: dict[str, str]):  # type: ignore[no-untyped-def]
                progress(f"server with {env or 'no faults'}", new_step=False)
                return running_server(workers=1, env=env, log_path=out / "server.log")

            report = run_parallel(
                factory,
                healthy_url=url,
                profile=profiles.parallel,
                slo=slo,
                progress=lambda m: progress(m, new_step=False),
            )
            print(report.table())
            summary["profiles"]["parallel"] = report.to_json()
            codes["parallel"] = 0 if report.passed else 1
        # the scaling ratio: the same profile on one worker and on one worker per core
        for fewer in sorted({1, os.cpu_count() or 1} - {workers}):
            progress(f"saturation profile on a {fewer}-worker server (the scaling ratio)")
            key = f"saturation_{fewer}_worker"
            with running_server(workers=fewer, log_path=out / "server.log") as smaller:
                cpu_before = cpu_seconds(smaller.pid)
                run = run_profile(
                    "saturation",
                    smaller,
                    out / key,
                    profiles.saturation,
                    quiet=True,
                    slo_file=slo_start,
                )
                _cpu_per_call(run.summary, cpu_seconds(smaller.pid) - cpu_before)
            summary["profiles"][key] = run.summary
        progress("in-process pytest-benchmark (tests/bench)")
        host_before = cpu_times()
        codes["inprocess"] = _python(
            "-m",
            "pytest",
            "-q",
            "-m",
            "bench",
            "--benchmark-enable",
            "--benchmark-only",
            "tests/bench",
            "-p",
            "no:randomly",
            env={"OCM_LATENCY_RECORDS": str(out / RECORDS_FILE), SLO_FILE_ENV: str(slo_hard)},
        )
        summary["profiles"]["inprocess"] = {"machine_cpu": cpu_shares(host_before, cpu_times())}
        progress("golden eval and gate")
        eval_dir = out / "eval"
        eval_code = _python(
            "-m",
            "evals",
            "run",
            "--target",
            GATE_TARGET,
            "--golden",
            "golden",
            "--out",
            str(eval_dir),
            "--ablation",
            "--concurrency",
            "2",
        )
        gate_code = (
            _python(
                "-m",
                "evals",
                "gate",
                "--run",
                str(eval_dir),
                "--config",
                "evals/gate.yaml",
                "--baseline",
                "evals/baseline.json",
                "--require-baseline",
            )
            if eval_code == 0
            else 2
        )
        codes["gate"] = gate_code
        summary["gate_pass"] = gate_code == 0
    except KeyboardInterrupt:
        print("\ninterrupted: servers stopped, partial results kept", file=sys.stderr)
        summary["harness_errors"].append("interrupted")
        codes["interrupted"] = 130
    except Exception as exc:  # a step that cannot run is reported, never a pass
        print(f"\nbench step failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        summary["harness_errors"].append(f"{type(exc).__name__}: {exc}")
        codes["harness"] = 2
    summary["locust_exit_codes"] = raw_codes
    return _finish(out, out_root, summary, codes, slo, progress)


def _bar_table(raw: Slo, scaled: Slo, tools: list[str]) -> dict[str, Any]:
    """{profile: {tool: {metric: {raw, calibrated}}}} for the tight profiles, and saturation."""
    table: dict[str, Any] = {
        profile: {
            tool: {
                metric: {"raw": bound, "calibrated": scaled.bars(profile, tool)[metric]}
                for metric, bound in raw.bars(profile, tool).items()
            }
            for tool in tools
        }
        for profile in TIGHT_PROFILES
    }
    table["saturation"] = {
        metric: {"raw": bound, "calibrated": scaled.profiles.get("saturation", {}).get(metric)}
        for metric, bound in raw.profiles.get("saturation", {}).items()
    }
    return table


def _cpu_per_call_verdict(summary: dict[str, Any], slo: Slo) -> list[Miss]:
    """The server's CPU per call against the mean of the run's two reference readings."""
    if slo.cpu_per_call is None:
        return []
    readings: list[float] = [
        float(m["reference_ms"])
        for m in (summary.get("machine_at_start") or {}, summary.get("machine_at_end") or {})
        if m.get("reference_ms")
    ]
    reference = round(sum(readings) / len(readings), 3) if readings else None
    run = summary["profiles"].get(slo.cpu_per_call.profile) or {}
    cpu = run.get("server_cpu_ms_per_call")
    ratio, misses = evaluate_cpu_per_call(cpu, reference, slo)
    summary["cpu_per_call"] = {
        "profile": slo.cpu_per_call.profile,
        "server_cpu_ms": cpu,
        "reference_ms": reference,
        "ratio": ratio,
        "max_ratio": slo.cpu_per_call.max_reference_ratio,
    }
    return misses


def _run_misses(summary: dict[str, Any], records: list[Any], slo: Slo) -> list[Miss]:
    """What a locust run's own verdict held beyond its records: calls that failed before any
    tool (initialize, tools/list) and a run that recorded no tool at all."""
    misses = []
    for name, run in summary["profiles"].items():
        if name.split("_")[0] not in LOCUST_PROFILES or not isinstance(run, dict) or not run:
            continue
        tool_errors = sum(r.errors for r in records if r.profile == name)
        setup = int(run.get("errors") or 0) - tool_errors
        if name in LOCUST_PROFILES and setup > slo.max_errors:
            misses.append(Miss(name, "initialize/tools/list", "errors", setup, slo.max_errors))
        if not run.get("calls"):
            misses.append(Miss(name, "all tools", "min_calls", 0, 1))
    return misses


def _finish(
    out: Path,
    out_root: Path,
    summary: dict[str, Any],
    codes: dict[str, int],
    raw_slo: Slo,
    progress: Progress,
) -> int:
    summary["machine_at_end"] = _machine(_workload(raw_slo))
    used = _factor(raw_slo, summary["machine_at_start"], summary["machine_at_end"])
    slo = raw_slo.scaled(used.value)
    cal = raw_slo.calibration
    summary["calibration"] = {
        "factor": used.to_json(),
        "workload": _workload(raw_slo),
        "reference": cal.model_dump() if cal else None,
    }
    records = read_records(out / RECORDS_FILE) if (out / RECORDS_FILE).exists() else []
    summary["bars"] = _bar_table(raw_slo, slo, sorted({r.tool for r in records}))
    misses = evaluate(records, slo) + _run_misses(summary, records, slo)
    sat = summary["profiles"].get("saturation", {})
    summary["saturation_rps"] = sat.get("saturation_rps", 0.0)
    misses += evaluate_saturation(summary["saturation_rps"], slo)
    misses += _cpu_per_call_verdict(summary, raw_slo)
    summary["saturation_rps_by_workers"] = {
        str(summary["server_workers"]): summary["saturation_rps"],
        **{
            key.split("_")[1]: run.get("saturation_rps", 0.0)
            for key, run in summary["profiles"].items()
            if key.startswith("saturation_") and key.endswith("_worker")
        },
    }
    latency = {r.tool: r for r in records if r.profile == "latency"}
    paced = {r.tool: r for r in records if r.profile == "paced"}
    inproc = {r.tool: r for r in records if r.profile == "inprocess"}
    summary["tools"] = {
        tool: {
            "p50_ms": r.p50_ms,
            "p95_ms": r.p95_ms,
            "p99_ms": r.p99_ms,
            "rps": r.rps,
            "errors": sum(x.errors for x in records if x.tool == tool),
            "paced_p95_ms": paced[tool].p95_ms if tool in paced else None,
            "paced_p99_ms": paced[tool].p99_ms if tool in paced else None,
            "inprocess_p50_ms": inproc[tool].p50_ms if tool in inproc else None,
            "inprocess_p95_ms": inproc[tool].p95_ms if tool in inproc else None,
        }
        for tool, r in sorted(latency.items())
    }
    summary["cache_hit_rate"] = {
        name: p.get("cache_hit_rate")
        for name, p in summary["profiles"].items()
        if isinstance(p, dict) and "cache_hit_rate" in p
    }
    parallel = summary["profiles"].get("parallel", {})
    parallel_misses = [
        f"parallel ({f['check']}) {f['subject']}: {f['detail']}"
        for f in parallel.get("findings", [])
        if not f["passed"]
    ]
    summary["misses"] = [m.text for m in misses] + parallel_misses
    summary["slo_pass"] = (
        not summary["misses"]
        and bool(parallel.get("passed"))
        and all(codes.get(k, 1) == 0 for k in ("latency", "paced", "saturation", "inprocess"))
    )
    summary.setdefault("gate_pass", False)
    summary["exit_codes"] = codes
    summary["elapsed_s"] = round(time.monotonic() - progress.start, 1)
    exit_code = 0 if summary["slo_pass"] and summary["gate_pass"] else 1
    if summary["harness_errors"] and exit_code == 0:
        exit_code = 2
    if "interrupted" in codes:
        exit_code = 130
    summary["exit_code"] = exit_code
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    md = render_markdown(summary)
    (out / "summary.md").write_text(md, encoding="utf-8")
    if _python("-m", "evals", "report", "--bench", str(out)) != 0:  # bench.md + bench.html
        print("the bench report could not be rendered (summary.json is complete)", file=sys.stderr)
    latest = out_root / "latest"
    shutil.rmtree(latest, ignore_errors=True)
    shutil.copytree(out, latest)
    print("\n" + md)
    print(miss_table(misses, title="SLO (all profiles)"))
    if parallel_misses:
        print("parallel misses:\n  " + "\n  ".join(parallel_misses))
    print(f"\nreports: {out} (copied to {latest}); exit {exit_code}")
    return exit_code


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _bar(summary: dict[str, Any], profile: str, tool: str, metric: str) -> str:
    """`15 -> 16.5` (raw bar, scaled bar), or `-` when the profile has no such bar."""
    bar = ((summary.get("bars") or {}).get(profile) or {}).get(tool, {}).get(metric)
    if not bar:
        return "-"
    return f"{_fmt(bar['raw'])} -> {_fmt(bar['calibrated'])}"


def kernel_note(machine: dict[str, Any], reference: dict[str, Any]) -> list[str]:
    """Whether this machine's kernels differ from the calibration machine's, in words."""
    flags = reference.get("flags") or {}
    if flags and not set(relevant_flags(machine)) & set(flags):
        return [
            f"This machine ({machine.get('arch')}) is of another architecture than the "
            "calibration machine: the factor measured here, not the calibration's machine, sets "
            "the bars."
        ]
    more, fewer = lacking(machine, flags)
    if not more and not fewer:
        return []
    parts = []
    if more:
        parts.append(f"has {', '.join(more)}, which the calibration machine lacks")
    if fewer:
        parts.append(f"lacks {', '.join(fewer)}, which the calibration machine has")
    return [
        f"This machine {' and '.join(parts)}: other kernels run, so the factor measured here, "
        "not the calibration's machine, sets the bars."
    ]


def calibration_lines(summary: dict[str, Any]) -> list[str]:
    """The machine, the reference readings and the factor the tight bars were scaled by."""
    start = summary.get("machine_at_start") or {}
    end = summary.get("machine_at_end") or {}
    cal = summary.get("calibration") or {}
    f = cal.get("factor") or {}
    ref = cal.get("reference") or {}
    lines = []
    if summary.get("machine"):
        lines.append(f"Machine: {one_line(summary['machine'])}.")
    lines.append(
        f"Reference workload ({cal.get('workload', 'embedding')}, load/calibrate.py): "
        f"{_fmt(start.get('reference_ms'))} ms at the start, {_fmt(end.get('reference_ms'))} ms "
        "at the end; slower than usual means the machine, not only the server, was slow."
    )
    if f:
        where = (
            f"{_fmt(ref.get('reference_ms'))} ms on {ref.get('cpu_model') or '?'} "
            f"(flags {', '.join(k for k, v in (ref.get('flags') or {}).items() if v) or '-'}, "
            f"onnxruntime {ref.get('onnxruntime') or '-'})"
            if ref
            else "no calibration recorded"
        )
        lines.append(
            f"Tight bars scaled by **{_fmt(f.get('value'))}** ({f.get('note')}); calibration: "
            f"{where}. Spec ceilings, errors and the parallel guarantees are never scaled."
        )
        if ref and summary.get("machine"):
            lines.extend(kernel_note(summary["machine"], ref))
    cpu = summary.get("cpu_per_call")
    if cpu:
        lines.append(
            f"Server CPU per call ({cpu['profile']} profile): {_fmt(cpu['server_cpu_ms'])} ms, "
            f"**{_fmt(cpu['ratio'])}x** the reference workload's {_fmt(cpu['reference_ms'])} ms "
            f"(bar <= {_fmt(cpu['max_ratio'])}x): a slower machine slows both, a costlier server "
            "only the first."
        )
    return lines


def render_markdown(summary: dict[str, Any]) -> str:
    """A short, plain summary; the full numbers are in summary.json and the locust HTML."""
    lines = [
        f"# Bench {summary['timestamp']}",
        "",
        f"SLO {'PASS' if summary['slo_pass'] else 'MISS'}, gate "
        f"{'PASS' if summary['gate_pass'] else 'MISS'}; "
        f"{summary['server_workers']} server workers; "
        f"{summary.get('elapsed_s', 0):.0f} s.",
        "",
        *[line for text in calibration_lines(summary) for line in (text, "")],
        f"Bars are `raw -> calibrated` (ms); p50/p95/p99: {DEFINITION}.",
        "",
        "| tool | latency p50 ms | bar | latency p95 ms | bar | latency p99 ms | paced p95 ms | bar "
        "| in-process p50 ms | bar | in-process p95 ms | bar | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for tool, t in summary["tools"].items():
        lines.append(
            f"| {tool} | {_fmt(t['p50_ms'])} | {_bar(summary, 'latency', tool, 'p50_ms')} | "
            f"{_fmt(t['p95_ms'])} | {_bar(summary, 'latency', tool, 'p95_ms')} | "
            f"{_fmt(t['p99_ms'])} | {_fmt(t['paced_p95_ms'])} | "
            f"{_bar(summary, 'paced', tool, 'p95_ms')} | {_fmt(t['inprocess_p50_ms'])} | "
            f"{_bar(summary, 'inprocess', tool, 'p50_ms')} | {_fmt(t.get('inprocess_p95_ms'))} | "
            f"{_bar(summary, 'inprocess', tool, 'p95_ms')} | {t['errors']} |"
        )
    sat_bars = (summary.get("bars") or {}).get("saturation") or {}
    if sat_bars.get("min_rps"):
        lines += [
            "",
            f"Saturation floor: {_fmt(sat_bars['min_rps']['raw'])} -> "
            f"{_fmt(sat_bars['min_rps']['calibrated'])} calls/s (divided by the factor); step "
            f"p95 bar {_fmt((sat_bars.get('step_p95_ms') or {}).get('raw'))} -> "
            f"{_fmt((sat_bars.get('step_p95_ms') or {}).get('calibrated'))} ms.",
        ]
    by_workers = ", ".join(
        f"{w} worker(s): {rps:g} calls/s"
        for w, rps in sorted(summary["saturation_rps_by_workers"].items())
    )
    steal = {
        name: f"{p['machine_cpu']['steal']:.1%}"
        for name, p in summary["profiles"].items()
        if isinstance(p, dict) and p.get("machine_cpu")
    }
    cpu = {
        name: p.get("server_cpu_ms_per_call")
        for name, p in summary["profiles"].items()
        if isinstance(p, dict) and p.get("server_cpu_ms_per_call")
    }
    lines += [
        "",
        f"Saturation (highest sustained, 0 errors): {by_workers}.",
        f"Server cache hit rate by profile: {summary['cache_hit_rate']}.",
        f"Server CPU ms per call by profile (all server processes): {cpu}.",
        f"CPU time the hypervisor took (steal) by profile: {steal or 'not readable here'}; "
        "a few % is usual, more means another guest ran on these cores and latency misses "
        "are partly the machine's.",
    ]
    parallel = summary["profiles"].get("parallel", {})
    if parallel.get("findings"):
        lines += ["", "| parallel check | subject | held | detail |", "| --- | --- | --- | --- |"]
        lines += [
            f"| ({f['check']}) | {f['subject']} | {'yes' if f['passed'] else 'NO'} | {f['detail']} |"
            for f in parallel["findings"]
        ]
    if summary["misses"]:
        lines += ["", "## Misses", "", *[f"- {m}" for m in summary["misses"]]]
    if summary["harness_errors"]:
        lines += ["", "## Could not run", "", *[f"- {e}" for e in summary["harness_errors"]]]
    return "\n".join(lines) + "\n"
