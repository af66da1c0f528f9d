"""`make bench`: the whole benchmark in one bounded, self-cleaning sequence.

server (all workers) -> latency, paced, saturation -> saturation again on one worker (the
scaling ratio) -> parallel guarantees (their own server configurations) -> in-process
pytest-benchmark -> golden eval + gate -> `reports/bench/<timestamp>/` and `reports/latest/`
(`summary.json`, `summary.md`, `latency.jsonl`, locust CSV and HTML, the eval run log).
Every server it starts is stopped, also on failure or Ctrl-C. Exit 0 only if every SLO and
the gate passed; 1 if a target or the gate missed; 2 if a step could not run.
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

from load.calibrate import reference_ms
from load.hoststat import cpu_shares, cpu_times
from load.parallel import run_parallel
from load.profiles import load_profiles
from load.records import RECORDS_FILE, read_records
from load.run import run_profile
from load.server import cpu_seconds, running_server
from load.slo import evaluate, evaluate_saturation, load_slo, miss_table
from reference_server.config import PROJECT_ROOT, default_http_workers

GATE_TARGET = os.environ.get(
    "GATE_TARGET", "inprocess:sql_timeout_ms=5000,vector_timeout_ms=5000,tool_timeout_ms=10000"
)
STEPS = 8


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


def _machine() -> dict[str, Any]:
    """Cores, load and the reference workload's time (load/calibrate.py): a miss measured while
    the machine ran its fixed work slower than usual is the machine's as much as the server's."""
    load1, load5, _ = os.getloadavg()
    return {
        "cores": os.cpu_count(),
        "load_avg_1m": round(load1, 2),
        "load_avg_5m": round(load5, 2),
        "reference_ms": reference_ms(),
    }


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
        "machine_at_start": _machine(),
        "server_workers": workers,
        "profiles": {},
        "harness_errors": [],
    }
    codes: dict[str, int] = {}
    try:
        progress(f"starting the reference server with {workers} workers")
        with running_server(workers=workers, log_path=out / "server.log") as url:
            for name in ("latency", "paced", "saturation"):
                settings = getattr(profiles, name)
                progress(f"{name} profile ({settings.time_s:.0f} s) against {url}")
                cpu_before = cpu_seconds(url.pid)
                run = run_profile(name, url, out, settings, quiet=True)
                codes[name] = run.exit_code
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
                run = run_profile("saturation", smaller, out / key, profiles.saturation, quiet=True)
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
            env={"OCM_LATENCY_RECORDS": str(out / RECORDS_FILE)},
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
    return _finish(out, out_root, summary, codes, slo, progress)


def _finish(
    out: Path,
    out_root: Path,
    summary: dict[str, Any],
    codes: dict[str, int],
    slo: Any,
    progress: Progress,
) -> int:
    records = read_records(out / RECORDS_FILE) if (out / RECORDS_FILE).exists() else []
    misses = evaluate(records, slo)
    sat = summary["profiles"].get("saturation", {})
    summary["saturation_rps"] = sat.get("saturation_rps", 0.0)
    misses += evaluate_saturation(summary["saturation_rps"], slo)
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
    summary["machine_at_end"] = _machine()
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


def render_markdown(summary: dict[str, Any]) -> str:
    """A short, plain summary; the full numbers are in summary.json and the locust HTML."""
    lines = [
        f"# Bench {summary['timestamp']}",
        "",
        f"SLO {'PASS' if summary['slo_pass'] else 'MISS'}, gate "
        f"{'PASS' if summary['gate_pass'] else 'MISS'}; "
        f"{summary['server_workers']} server workers; machine {summary['machine_at_start']}; "
        f"{summary.get('elapsed_s', 0):.0f} s.",
        "",
        "Reference workload (one query embedding, load/calibrate.py): "
        f"{_fmt(summary['machine_at_start'].get('reference_ms'))} ms at the start, "
        f"{_fmt((summary.get('machine_at_end') or {}).get('reference_ms'))} ms at the end; "
        "slower than usual means the machine, not only the server, was slow.",
        "",
        "| tool | latency p50 ms | latency p95 ms | latency p99 ms | paced p95 ms | in-process p50 ms | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for tool, t in summary["tools"].items():
        lines.append(
            f"| {tool} | {_fmt(t['p50_ms'])} | {_fmt(t['p95_ms'])} | {_fmt(t['p99_ms'])} | "
            f"{_fmt(t['paced_p95_ms'])} | {_fmt(t['inprocess_p50_ms'])} | {t['errors']} |"
        )
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
