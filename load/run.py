"""Run one locust profile headless against a loopback MCP endpoint; return its exit code.

With `workers > 0` locust's own master/worker mode is used (one master, N worker processes on
loopback) for more load than one process gives. Every part is bounded: the warm-up by its own
deadline, each call by `call_deadline_s` (a call without a complete reply by then is a failed
call, in the warm-up and in locust alike), and the locust run by `--run-time` plus a hard
wall-clock limit after which its processes are stopped.

Over all of it, an overall deadline (`deadline_s`; by default the warm-up's deadline + the
profile's time + that wall-clock limit): whatever is still running then is stopped (the
warm-up ends early, locust's processes are stopped), and the run comes back cut short
(`LocustRun.cut_short`, exit 2) with `summary["cut_short"]` saying when, during what and what
was not done, beside whatever locust wrote before it was stopped. A warm-up after which the
server answered nothing (load/client.py) aborts the run before locust starts (exit 2), the
tool it hung on named.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from load.client import WARM_UP_DEADLINE_S, WarmUp, warm_up
from load.hoststat import cpu_shares, cpu_times
from load.profiles import LocustProfile, SaturationProfile
from load.safety import require_loopback
from ocm_common.durations import locust_time
from ocm_common.launcher import free_port, stop
from ocm_common.mcp_http import CALL_DEADLINE_S, McpCallError
from ocm_common.profile_results import CutShort, WarmUpSummary

LOAD_DIR = Path(__file__).resolve().parent
LOCUSTFILE = LOAD_DIR / "locustfile.py"
SATURATION_LOCUSTFILE = LOAD_DIR / "saturation.py"
STEAL_WORTH_SAYING = 0.05  # share of CPU time; idle, this machine's steal reads ~1 %
STOP_GRACE_S = 2.0  # past a call's deadline, for a user to record its last call and stop


@dataclass
class LocustRun:
    profile: str
    exit_code: int
    # the profile's summary as locust wrote it (JSON read back, not validated), with what this
    # run added (warm-up, cut short, call deadline, CPU shares)
    summary: dict[str, Any]
    cut_short: bool = False  # stopped at its overall deadline (summary["cut_short"] says how)


def wall_clock_bound(call_deadline_s: float) -> float:
    """Seconds past the run time before the locust processes are stopped: the users' stop
    timeout (a call in flight at the end) and a margin to start up and write the reports."""
    return stop_timeout(call_deadline_s) + 60


def profile_time_s(settings: LocustProfile | SaturationProfile) -> float:
    """How long locust runs the profile (its --run-time)."""
    if isinstance(settings, SaturationProfile):
        return settings.time_s + 2 * settings.step_time_s
    return settings.time_s + settings.warmup_s


def default_deadline(
    settings: LocustProfile | SaturationProfile,
    call_deadline_s: float = CALL_DEADLINE_S,
    warm_up_deadline_s: float = WARM_UP_DEADLINE_S,
) -> float:
    """The overall deadline a run gets unless given one: every part's own bound, added."""
    return warm_up_deadline_s + profile_time_s(settings) + wall_clock_bound(call_deadline_s)


def _cut_short(
    deadline_s: float, started: float, during: str, not_done: str, bound: str = "overall"
) -> CutShort:
    return CutShort(
        deadline_s=deadline_s,
        bound=bound,
        elapsed_s=round(time.monotonic() - started, 3),
        during=during,
        not_done=not_done,
    )


def _warm_up_summary(warmed: WarmUp) -> WarmUpSummary:
    return WarmUpSummary(**asdict(warmed), blamed=warmed.blamed, lines=warmed.lines())


def _locust() -> list[str]:
    return [sys.executable, "-m", "locust"]


def stop_timeout(call_deadline_s: float) -> float:
    """Locust's wait for users still in a call when the run time is up: one call deadline, so
    a call to a hung tool ends as a counted failure instead of being dropped."""
    return call_deadline_s + STOP_GRACE_S


def _common(
    profile: str, url: str, out_dir: Path, *, time_s: float, quiet: bool, call_deadline_s: float
) -> list[str]:
    parts = urlsplit(url)
    host = f"{parts.scheme}://{parts.netloc}"
    args = [
        "--headless",
        "--host",
        host,
        "--mcp-path",
        parts.path or "/mcp",
        "--load-profile",
        profile,
        "--out-dir",
        str(out_dir),
        "--run-time",
        locust_time(time_s),
        "--stop-timeout",
        str(math.ceil(stop_timeout(call_deadline_s))),
        "--csv",
        str(out_dir / profile),
        "--html",
        str(out_dir / f"{profile}.html"),
        "--loglevel",
        "WARNING",
        "--exit-code-on-error",
        "1",
    ]
    if quiet:
        args.append("--only-summary")
    return args


def run_profile(
    profile: str,
    url: str,
    out_dir: Path,
    settings: LocustProfile | SaturationProfile,
    *,
    workers: int = 0,
    quiet: bool = False,
    slo_file: Path | None = None,
    mix: str = "golden",
    allow_writes: bool = False,
    call_deadline_s: float = CALL_DEADLINE_S,
    warm_up_deadline_s: float = WARM_UP_DEADLINE_S,
    deadline_s: float | None = None,
) -> LocustRun:
    """One locust run; its per-tool records land in `out_dir/latency.jsonl`. Ends within
    `deadline_s` (default :func:`default_deadline`: `warm_up_deadline_s` + the profile's time +
    `wall_clock_bound`) whatever the server does, cut short if it comes first."""
    require_loopback(url)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    time_s = profile_time_s(settings)
    overall = (
        deadline_s
        if deadline_s is not None
        else default_deadline(settings, call_deadline_s, warm_up_deadline_s)
    )

    def remaining() -> float:
        return overall - (time.monotonic() - started)

    try:
        warmed = warm_up(
            url,
            mix=mix,
            allow_writes=allow_writes,
            call_deadline_s=call_deadline_s,
            deadline_s=min(warm_up_deadline_s, remaining()),
        )
    except (httpx.HTTPError, McpCallError) as exc:
        print(f"{profile}: the server did not answer the warm-up: {exc}", file=sys.stderr)
        return LocustRun(profile, 2, {"warm_up_error": f"the server did not answer: {exc}"})
    except ValueError as exc:  # no task mix to make (no callable tools, a bad examples file)
        print(f"{profile}: no warm-up: {exc}", file=sys.stderr)
        return LocustRun(profile, 2, {"warm_up_error": str(exc)})
    if warmed.aborted:
        tool = warmed.hung[-1]
        print(f"{profile}: not run: the server stopped answering after {tool}", file=sys.stderr)
        return LocustRun(
            profile,
            2,
            {
                "warm_up": _warm_up_summary(warmed).model_dump(),
                "aborted": f"the server answered nothing after {tool}'s warm-up call hung",
            },
        )
    if remaining() <= 0:
        print(f"{profile}: cut short at its {overall:g} s deadline in the warm-up", file=sys.stderr)
        early = _cut_short(overall, started, "warm-up", "the locust run (not started)")
        body = {"warm_up": _warm_up_summary(warmed).model_dump(), "cut_short": early.model_dump()}
        return LocustRun(profile, 2, body, cut_short=True)
    host_before = cpu_times()
    if isinstance(settings, SaturationProfile):
        locustfile = SATURATION_LOCUSTFILE
        extra = [
            "--steps",
            ",".join(str(s) for s in settings.steps),
            "--step-time",
            str(settings.step_time_s),
        ]
    else:
        locustfile = LOCUSTFILE
        extra = [
            "--warmup",
            str(settings.warmup_s),
            "--users",
            str(settings.users),
            "--spawn-rate",
            str(settings.users),
            "--rate",
            str(settings.rate),
        ]
    if slo_file:
        extra += ["--slo-file", str(slo_file)]
    mix_args = [
        "--mix",
        mix,
        "--call-timeout",
        str(call_deadline_s),
        *(["--allow-writes"] if allow_writes else []),
    ]
    extra += mix_args
    parts = urlsplit(url)
    # Workers pace their users from the total rate and user count, so they get them too.
    worker_args = [
        "--host",
        f"{parts.scheme}://{parts.netloc}",
        "--mcp-path",
        parts.path or "/mcp",
        *mix_args,
    ]
    if isinstance(settings, LocustProfile):
        worker_args += ["--users", str(settings.users), "--rate", str(settings.rate)]
    common = [
        "-f",
        str(locustfile),
        *_common(
            profile, url, out_dir, time_s=time_s, quiet=quiet, call_deadline_s=call_deadline_s
        ),
        *extra,
    ]
    procs: list[subprocess.Popen[bytes]] = []
    own_bound = time_s + wall_clock_bound(call_deadline_s)
    limit = own_bound
    cut: CutShort | None = None
    try:
        if workers > 0:
            port = free_port()
            master = subprocess.Popen(
                [
                    *_locust(),
                    *common,
                    "--master",
                    "--master-bind-host",
                    "127.0.0.1",
                    "--master-bind-port",
                    str(port),
                    "--expect-workers",
                    str(workers),
                ],
                start_new_session=True,
            )
            procs.append(master)
            for share in range(workers):
                procs.append(
                    subprocess.Popen(
                        [
                            *_locust(),
                            "-f",
                            str(locustfile),
                            "--worker",
                            "--master-host",
                            "127.0.0.1",
                            "--master-port",
                            str(port),
                            "--loglevel",
                            "WARNING",
                            *worker_args,
                            "--mix-share",
                            f"{share}/{workers}",
                        ],
                        start_new_session=True,
                        stdout=subprocess.DEVNULL,
                    )
                )
        else:
            procs.append(subprocess.Popen([*_locust(), *common], start_new_session=True))
        limit = min(own_bound, max(remaining(), 0.0))
        code = procs[0].wait(timeout=limit)
    except subprocess.TimeoutExpired:
        code = 2
        bound = "overall" if limit < own_bound else "locust's own (run time + stop timeout + 60 s)"
        what = f"its {overall:g} s deadline" if limit < own_bound else "its time bound"
        print(f"{profile}: cut short: locust still running at {what}; stopped", file=sys.stderr)
        cut = _cut_short(
            overall if limit < own_bound else own_bound,
            started,
            "locust run",
            "the rest of the locust run; its summary and latency records only if locust wrote "
            "them before it was stopped",
            bound,
        )
    finally:
        for p in procs:
            stop(p, grace_s=15)
    summary_file = out_dir / f"{profile}.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    if not summary and code == 0:
        code = 2  # locust exited without a verdict: a harness problem, never a pass
    if cut is not None:
        summary["cut_short"] = cut.model_dump()
    if summary:
        summary["warm_up"] = _warm_up_summary(warmed).model_dump()
        summary["call_deadline_s"] = call_deadline_s
        summary["machine_cpu"] = shares = cpu_shares(host_before, cpu_times())
        summary_file.write_text(json.dumps(summary, indent=2), encoding="utf-8")
        if shares and shares["steal"] >= STEAL_WORTH_SAYING:
            print(
                f"{profile}: the hypervisor took {shares['steal']:.1%} of this machine's CPU time "
                "during the run (steal): latency misses are partly the machine's",
                file=sys.stderr,
            )
    return LocustRun(profile, code, summary, cut_short=cut is not None)
