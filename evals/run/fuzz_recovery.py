"""What the fuzz run does when a case killed, wedged or hung the server: blame the case (or
the one before, when the process ended after answering), restart where needed (counted against
the caps), record one finding per tool, failure and case kind, and shrink the case first, each
attempt alone against a fresh process (bounded).
"""

from __future__ import annotations

import dataclasses

from evals.run.fuzz_checks import classify
from evals.run.fuzz_models import EDGE_FAMILY, VALID_FAMILY, Case, finding_for
from evals.run.fuzz_session import FuzzSession
from evals.run.fuzz_survival import (
    NEEDS_RESTART,
    FailureHow,
    StopRun,
    StopTool,
    rule_for,
    smaller_args,
)
from evals.run.outcome import ToolInfo


class RecoveringSession(FuzzSession):
    """A :class:`FuzzSession` that survives the server: a case after which it died, stopped
    answering or hung is recorded, shrunk and followed by a restart (:meth:`_server_failure`)."""

    def ensure_serving(self) -> None:
        """Before a call: restart a server that needs it, and blame a death noticed now on the
        case before (it answered, then the process ended)."""
        process = self._process()
        if not self._needs_restart and process is not None and process.exited:
            if self._previous is not None and self._previous[0].name in self._stats:
                tool, case = self._previous
                self._previous = None
                self._server_failure(tool, case, "died", after_reply=True)
            else:
                self._needs_restart = True
        if self._needs_restart:
            self._reconnect()

    def _server_failure(
        self, tool: ToolInfo, case: Case, how: FailureHow, *, after_reply: bool = False
    ) -> None:
        """The case killed, wedged or hung the server: a restart where needed (counted), one
        finding per tool, failure and case kind, the case shrunk first (a fresh process per
        attempt, bounded)."""
        stats = self._stats[tool.name]
        ended = self._ended() if how in NEEDS_RESTART else ""
        if how in NEEDS_RESTART:
            self._needs_restart = True
        else:
            stats.hangs += 1
        key = (tool.name, how, case.kind)
        stop: BaseException | None = None
        if key not in self._recorded:
            self._recorded.add(key)
            try:
                shrunk, note = self._shrink(tool, case, how, after_reply)
            except (StopRun, KeyboardInterrupt) as exc:  # recorded unshrunk, then the run stops
                shrunk, note, stop = case, f"not shrunk: {exc or type(exc).__name__}", exc
            stats.failures += 1
            self._add(
                finding_for(
                    rule_for(how, case.kind),
                    tool.name,
                    case.kind,
                    case.family,
                    self._failure_text(how, case, ended, note, after_reply),
                    shrunk.short_args(),
                    self.seed,
                    self.reproduce(tool.name, _property_family(case)),
                    call="answered" if after_reply else "no-answer",
                )
            )
        if stop is not None:
            raise stop
        if how in NEEDS_RESTART:
            self._count_restart(tool.name)
        elif stats.hangs > self.config.restarts_per_tool:
            raise StopTool(
                f"hang cap: {stats.hangs} calls to {tool.name} timed out (cap "
                f"{self.config.restarts_per_tool}, --restarts-per-tool); its remaining cases "
                "were not run"
            )
        if self._needs_restart:
            self._reconnect()

    def _failure_text(
        self, how: FailureHow, case: Case, ended: str, note: str, after_reply: bool
    ) -> str:
        limit = f"{self.config.call_timeout_s:g} s"
        valid = " to an input the schema allows" if case.kind == "valid" else ""
        what = {
            "died": (
                f"the server ended after answering this call{valid}"
                if after_reply
                else f"no response{valid}: the server ended on this call"
            ),
            "stopped answering": (
                f"the server answered this call{valid}, then stopped answering (no answer to "
                "tools/list)"
                if after_reply
                else f"no response within {limit}{valid}, and no answer to tools/list after it: "
                "the server stopped answering"
            ),
            "hung": f"no response within {limit}{valid} (the server still answers tools/list)",
        }[how]
        restarted = "; restarted, the run went on" if how in NEEDS_RESTART else ""
        parts = [f"{case.edge}: {what}" if case.edge else what, ended, note]
        return "; ".join(p for p in parts if p) + restarted

    def _shrink(
        self, tool: ToolInfo, case: Case, how: FailureHow, after_reply: bool
    ) -> tuple[Case, str]:
        """The smallest input found that fails the same way, each attempt against a fresh
        process (a restart the caps do not count), at most `shrink_attempts` calls (a quarter
        of them for a hang, each of which costs the whole time limit)."""
        if self._process() is None and how in NEEDS_RESTART:
            return case, "not shrunk (only a stdio server is started again for each attempt)"
        budget = (
            self.config.shrink_attempts
            if how in NEEDS_RESTART
            else max(1, self.config.shrink_attempts // 4)
        )
        if budget < 1 or self.past_deadline():
            return case, ""
        attempts = 1
        if not self._reproduces(tool, case, how, after_reply):
            self.notes.append(
                f"{tool.name}: {how} on {case.short_args(120)}, not alone in a fresh process"
            )
            return (
                case,
                "it did not happen again alone in a fresh process (it may need the calls before it)",
            )
        best = case
        required = set((tool.input_schema or {}).get("required") or [])
        validity = self._validity.get(tool.name)
        progress = True
        while progress and attempts < budget and not self.past_deadline():
            progress = False
            for args in smaller_args(best.args, required):
                if attempts >= budget or self.past_deadline():
                    break
                if validity is not None and validity.is_valid(args) != (case.kind == "valid"):
                    continue
                attempts += 1
                candidate = dataclasses.replace(best, args=args, edge="")
                if self._reproduces(tool, candidate, how, after_reply):
                    best, progress = candidate, True
                    break
        shrunk = f", shrunk in {attempts - 1} more" if attempts > 1 else ""
        return (
            best,
            f"it happened again alone in a fresh process (1 attempt{shrunk}, each in a fresh process)",
        )

    def _reproduces(self, tool: ToolInfo, case: Case, how: FailureHow, after_reply: bool) -> bool:
        """Whether the case fails the same way alone, in a fresh process."""
        if self._needs_restart or self._process() is not None:
            self._reconnect()
        out, error, _ = self._call(tool.name, case.args)
        self._stats[tool.name].shrink_calls += 1
        now = self._how_failed(classify(out, error))
        if now is None and after_reply:  # it answered before: does the server still serve?
            process = self._process()
            if process is not None:
                self.runner.run(process.wait_exit(0.5), 5)
            _, now = self._answers_list()
        if now in NEEDS_RESTART:
            self._needs_restart = True
        return now is not None and (now == how or (now in NEEDS_RESTART and how in NEEDS_RESTART))


def _property_family(case: Case) -> str:
    """The --family that runs this case again: its own for an invalid one, the boundary
    cases for an edge, the generated valid cases (known-good inputs run first) otherwise."""
    if case.edge:
        return EDGE_FAMILY
    return case.family if case.kind == "invalid" else VALID_FAMILY
