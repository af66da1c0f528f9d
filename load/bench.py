"""`make bench`: the whole benchmark in one bounded, self-cleaning sequence.

server (all workers) -> latency, paced, saturation (each with the server's stage timers per tool,
read from the replies) -> parallel guarantees (their own server configurations) -> the transport
floor (a bare constant-returning FastMCP tool, same HTTP stack and workers) -> saturation again
on one worker (the scaling ratio) -> in-process latency and CPU per distinct call (functions in
this process: load/inprocess_latency.py, load/cpu_per_call.py) -> golden eval + gate ->
`reports/bench/<timestamp>/` and `reports/latest/` (`bench.record.json`: the run record whose
body is the typed `BenchSummary`; `bench.md` and `bench.html` rendered from it by `evals report`;
`latency.jsonl`, locust CSV and HTML, the eval run log).
Every server it starts is stopped, also on failure or Ctrl-C. Exit 0 only if every SLO and
the gate passed; 1 if a target or the gate missed; 2 if a step could not run.

The verdict is the bench's, not its parts': the reference workload is timed at the start and
the end (load/calibrate.py), the tight bars are scaled by the factor (load/calibration.py) and
every latency record is judged here against the scaled bars, raw and scaled side by side in
the summary. Locust runs get the bars as scaled at the start (the saturation step bar needs
one before the run); their exit code 1 (a miss) is re-judged here, any other is a harness
failure. The in-process steps fail only on a tool error; their records are judged here too.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from load import cpu_per_call, inprocess_latency
from load.bar_verdicts import verdict_table
from load.bench_judge import (
    bar_factor,
    judge_bench,
    parallel_misses,
    reference_workload,
)
from load.calibrate import measure
from load.hoststat import cpu_shares, cpu_times
from load.parallel import run_parallel
from load.profile_calls import InProcessServer, reference_cpu_ms
from load.profiles import load_profiles
from load.run import run_profile
from load.slo import load_slo, miss_table, write_slo
from load.stage_clock import StageClock
from load.taskmix import TaskMix
from load.transport_floor import TOOL as FLOOR_TOOL
from ocm_common.bench_summary import DISTINCT_KIND, BenchSummary, MachineLoad, TransportFloor
from ocm_common.latency_records import RECORDS_FILE, read_records, write_records
from ocm_common.launcher import cpu_seconds, running_server
from ocm_common.machine import describe
from ocm_common.profile_results import InProcessResult, LocustResult, ToolFigures
from ocm_common.run_record import Clock, header, write_record
from reference_server.config import default_http_workers

# Run again on the distinct-query mix (`make distinct-mix`, OCM_DISTINCT_MIX): real traffic
# repeats little, so these show what the golden mix's warm caches hide. Judged on errors and
# the spec's ceilings only (no tight bar was set on this mix), reported beside golden.
DISTINCT_PROFILES = ("paced", "saturation")
DISTINCT_MIX_ENV = "OCM_DISTINCT_MIX"
# locust's exit codes that are a verdict (re-judged here with the scaled bars); others: harness
VERDICT_CODES = (0, 1)
# the bare constant-returning FastMCP server (same HTTP stack) whose latency is the floor
FLOOR_COMMAND = (sys.executable, "-m", "ocm_cli", "transport-floor")


def planned_steps(locust_profiles: int, distinct_mix: bool, scaling_workers: int) -> int:
    """The progress() calls that start a step in run_bench: the server, each locust profile,
    each distinct-mix profile, parallel, the transport floor, each smaller worker count, the
    in-process benchmark, CPU per distinct call, the gate."""
    distinct = len(DISTINCT_PROFILES) + 1 if distinct_mix else 0
    return 1 + locust_profiles + 1 + 1 + scaling_workers + 1 + distinct + 1


def _scaling_workers(server_workers: int) -> list[int]:
    """The smaller worker counts the scaling ratio is measured on: one, and one per core."""
    return sorted({1, os.cpu_count() or 1} - {server_workers})


def _distinct_mix_path() -> Path | None:
    path = os.environ.get(DISTINCT_MIX_ENV, "")
    return Path(path) if path and Path(path).is_file() else None


class Progress:
    def __init__(self, steps: int = 0) -> None:
        self.start = time.monotonic()
        self.step = 0
        self.steps = steps

    def __call__(self, message: str, *, new_step: bool = True) -> None:
        if new_step:
            self.step += 1
        prefix = f"[{self.step}/{self.steps}]" if new_step else "     "
        print(f"\n{prefix} {time.monotonic() - self.start:5.0f}s  {message}", flush=True)


def _cpu_per_call(run: LocustResult, cpu_s: float) -> None:
    """Server CPU per call (all its processes): what a call costs whatever else the machine runs
    (includes the warm-up calls, so it errs high)."""
    calls = run.calls or 0
    run.server_cpu_s = round(cpu_s, 2)
    run.server_cpu_ms_per_call = round(cpu_s * 1000 / calls, 2) if calls else None


def _machine(workload: str) -> MachineLoad:
    """Cores, load and the reference workload's time (load/calibrate.py): a miss measured while
    the machine ran its fixed work slower than usual is the machine's as much as the server's."""
    load1, load5, _ = os.getloadavg()
    reference = measure(workload)
    return MachineLoad(
        cores=os.cpu_count(),
        load_avg_1m=round(load1, 2),
        load_avg_5m=round(load5, 2),
        reference_ms=reference["ms"] if reference else None,
        reference=reference,
    )


@dataclass(frozen=True)
class BenchSteps:
    """What the bench needs from the eval harness, given as functions by the program that runs
    it (`ocm bench`: ocm_cli/bench_steps.py), so that load never imports evals and nothing is
    passed as a command line.

    `gate_target`: the target the release gate runs (evals/gate.yaml's, or GATE_TARGET).
    `eval_and_gate(target, folder)`: the golden eval against `target` into `folder`, then the
    gate; the gate's exit code (2 when the eval could not run). `render_report(folder)`: the
    report of the record there (bench.md, bench.html); 0, or 2."""

    gate_target: str
    eval_and_gate: Callable[[str, Path], int]
    render_report: Callable[[Path], int]


class Bench:
    """One bench: its folder, settings, summary and per-step exit codes, filled step by step."""

    def __init__(self, out_root: Path, steps: BenchSteps) -> None:
        self.steps = steps
        self.clock = Clock()
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.out_root = out_root
        self.out = (out_root / "bench" / stamp).resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        self.profiles = load_profiles()
        self.slo = load_slo()
        self.progress = Progress(
            planned_steps(
                len(self.profiles.locust()),
                _distinct_mix_path() is not None,
                len(_scaling_workers(default_http_workers())),
            )
        )
        self.summary = BenchSummary(
            timestamp=stamp,
            machine=describe(),
            machine_at_start=_machine(reference_workload(self.slo)),
            server_workers=default_http_workers(),
        )
        self.codes: dict[str, int] = {}
        self._in_process: InProcessServer | None = None
        at_start = bar_factor(self.slo, self.summary.machine_at_start)
        print(f"calibration at the start: factor {at_start.value:g} ({at_start.note})")
        self.slo_start = write_slo(self.slo.scaled(at_start.value), self.out / "slo.start.yaml")

    def server(self, workers: int, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        return running_server(workers=workers, env=env, log_path=self.out / "server.log")

    def locust(self, url: Any, name: str, out: Path, key: str, mix: str = "golden") -> int:
        """One locust profile against ``url``: its summary (with server CPU per call) under
        ``key``; the raw exit code returned. On another mix than golden its records are named
        ``<profile>-<mix kind>`` (e.g. ``paced-distinct``)."""
        settings = self.profiles.locust_settings(name)
        cpu_before = cpu_seconds(url.pid)
        run = run_profile(key, url, out, settings, quiet=True, slo_file=self.slo_start, mix=mix)
        result = LocustResult.model_validate(run.summary)
        _cpu_per_call(result, cpu_seconds(url.pid) - cpu_before)
        self.summary.profiles[key] = result
        return run.exit_code

    def load_profiles_and_parallel(self) -> None:
        """Every locust profile (latency, paced, saturation, and any other entry of a locust kind)
        on the all-workers server, then the parallel guarantees."""
        workers = self.summary.server_workers
        self.progress(f"starting the reference server with {workers} workers")
        with self.server(workers) as url:
            for name in self.profiles.locust():
                seconds = self.profiles.locust_settings(name).time_s
                self.progress(f"{name} profile ({seconds:.0f} s) against {url}")
                code = self.locust(url, name, self.out, name)
                self.summary.locust_exit_codes[name] = code
                self.codes[name] = 0 if code in VERDICT_CODES else code
            self.distinct(url)
            self.progress("parallel profile: (c) on this server, (a), (b), (d) on their own")

            def factory(env: dict[str, str]):  # type: ignore[no-untyped-def]
                self.progress(f"server with {env or 'no faults'}", new_step=False)
                return self.server(1, env)

            report = run_parallel(
                factory,
                healthy_url=url,
                profile=self.profiles.parallel,
                slo=self.slo,
                progress=lambda m: self.progress(m, new_step=False),
            )
            print(report.table())
            self.summary.profiles["parallel"] = report.result()
            self.codes["parallel"] = 0 if report.passed else 1

    def distinct(self, url: Any) -> None:
        """The paced and saturation profiles again on the distinct-query mix, same server."""
        path = os.environ.get(DISTINCT_MIX_ENV, "")
        if not path or not Path(path).is_file():
            self.summary.harness_errors.append(
                f"no distinct-query mix ({DISTINCT_MIX_ENV}={path!r}): `make distinct-mix` "
                "builds it (make bench does); golden figures only"
            )
            return
        for name in DISTINCT_PROFILES:
            key = f"{name}-{DISTINCT_KIND}"
            self.progress(f"{name} profile on the distinct-query mix ({Path(path).name})")
            code = self.locust(url, name, self.out, key, mix=f"examples:{path}")
            self.summary.locust_exit_codes[key] = code
            self.codes[key] = 0 if code in VERDICT_CODES else code

    def transport_floor(self) -> None:
        """The latency profile against a bare constant-returning FastMCP tool on the same HTTP
        stack and worker count: the floor beside the stage table."""
        workers = self.summary.server_workers
        self.progress(f"transport floor: {FLOOR_TOOL} on a {workers}-worker server")
        out = self.out / "transport_floor"
        floor = running_server(workers=workers, command=FLOOR_COMMAND, log_path=out / "log")
        with floor as url:
            run = run_profile("latency", url, out, self.profiles.latency, quiet=True, mix="schema")
        if run.exit_code not in VERDICT_CODES:
            self.summary.harness_errors.append(f"transport floor: locust exit {run.exit_code}")
        record = LocustResult.model_validate(run.summary).tools.get(FLOOR_TOOL) or ToolFigures()
        self.summary.transport_floor = TransportFloor(
            profile="latency",
            workers=workers,
            calls=int(record.n or 0),
            errors=int(record.errors or 0),
            p50_ms=record.p50_ms,
            p95_ms=record.p95_ms,
        )

    def scaling_ratio(self) -> None:
        """The same saturation profile on one worker and on one worker per core."""
        for fewer in _scaling_workers(self.summary.server_workers):
            self.progress(f"saturation profile on a {fewer}-worker server (the scaling ratio)")
            key = f"saturation_{fewer}_worker"
            with self.server(fewer) as smaller:
                self.locust(smaller, "saturation", self.out / key, key)

    def in_process_server(self) -> InProcessServer:
        """One warmed in-process server for the in-process steps (query-embedding cache off, so
        repeated requests pay the full cost), in this process."""
        if self._in_process is None:
            self._in_process = InProcessServer(StageClock(), embed_cache_size=0)
        return self._in_process

    def inprocess(self) -> None:
        """Per-tool latency through the in-memory MCP client (the `inprocess` profile): its
        records judged with the rest, a tool error fails the step."""
        self.progress("in-process latency (in-memory MCP client, embedding cache off)")
        host_before = cpu_times()
        records, problems = inprocess_latency.measure(
            self.in_process_server(), inprocess_latency.load_requests()
        )
        write_records(self.out / RECORDS_FILE, records)
        print(inprocess_latency.table(records))
        for problem in problems[:10]:
            print(f"  {problem}", file=sys.stderr)
        self.codes["inprocess"] = 1 if problems else 0
        self.summary.profiles["inprocess"] = InProcessResult(
            machine_cpu=cpu_shares(host_before, cpu_times()), tool_errors=len(problems)
        )

    def cpu_per_distinct_call(self) -> None:
        """CPU per distinct call per tool and kind, in this process; a call answered with a tool
        error fails the step."""
        path = _distinct_mix_path()
        if path is None:
            return  # `distinct` already named the missing mix
        self.progress("CPU per distinct call, in process")
        figures, failed = cpu_per_call.measure(
            self.in_process_server(), TaskMix.from_examples(path), reference_cpu_ms()
        )
        for problem in failed[:10]:
            print(f"  {problem}", file=sys.stderr)
        self.codes["cpu_per_call"] = 1 if failed else 0
        self.summary.distinct_call_cpu = figures

    def close(self) -> None:
        if self._in_process is not None:
            self._in_process.close()
            self._in_process = None

    def eval_and_gate(self) -> None:
        self.progress("golden eval and gate")
        gate_code = self.steps.eval_and_gate(self.steps.gate_target, self.out / "eval")
        self.codes["gate"] = gate_code
        self.summary.gate_pass = gate_code == 0


def run_bench(out_root: Path, steps: BenchSteps) -> int:
    bench = Bench(out_root, steps)
    try:
        bench.load_profiles_and_parallel()
        bench.transport_floor()
        bench.scaling_ratio()
        bench.inprocess()
        bench.cpu_per_distinct_call()
        bench.eval_and_gate()
    except KeyboardInterrupt:
        print("\ninterrupted: servers stopped, partial results kept", file=sys.stderr)
        bench.summary.harness_errors.append("interrupted")
        bench.codes["interrupted"] = 130
    except Exception as exc:  # a step that cannot run is reported, never a pass
        print(f"\nbench step failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        bench.summary.harness_errors.append(f"{type(exc).__name__}: {exc}")
        bench.codes["harness"] = 2
    finally:
        bench.close()
    return _finish(bench)


def _finish(bench: Bench) -> int:
    out, summary = bench.out, bench.summary
    summary.machine_at_end = _machine(reference_workload(bench.slo))
    records = read_records(out / RECORDS_FILE) if (out / RECORDS_FILE).exists() else []
    misses = judge_bench(
        summary,
        records,
        bench.codes,
        bench.slo,
        locust_profiles=bench.profiles.locust(),
        calibrated=bench.profiles.judge_calibrated,
    )
    summary.elapsed_s = round(time.monotonic() - bench.progress.start, 1)
    head = header(
        "bench",
        bench.clock,
        summary.exit_code,
        target="reference server (loopback HTTP) + in-process",
        settings={
            "profiles": {
                name: entry.model_dump(exclude={"quick"})
                for name, entry in bench.profiles.profiles.items()
            },
            "judge_calibrated": bench.profiles.judge_calibrated,
            "server_workers": summary.server_workers,
            "gate_target": bench.steps.gate_target,
        },
        machine=summary.machine,
    )
    write_record(out, head, summary, files=[RECORDS_FILE, "server.log", "eval"])
    if bench.steps.render_report(out) != 0:  # bench.md + bench.html
        print("the bench report could not be rendered (the record is complete)", file=sys.stderr)
    latest = bench.out_root / "latest"
    shutil.rmtree(latest, ignore_errors=True)
    shutil.copytree(out, latest)
    if (out / "bench.md").is_file():
        print("\n" + (out / "bench.md").read_text(encoding="utf-8"))
    print(
        "\nVerdict by bar (absolute: any machine; calibrated: scaled, margin from A/A spread;"
        " reported: not judged here)"
    )
    print(verdict_table(summary.verdicts))
    print(miss_table(misses, title="SLO (all profiles)"))
    if parallel_misses(summary):
        print("parallel misses:\n  " + "\n  ".join(parallel_misses(summary)))
    print(f"\nreports: {out} (copied to {latest}); exit {summary.exit_code}")
    return summary.exit_code
