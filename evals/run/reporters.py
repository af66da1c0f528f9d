"""Live reporters that subscribe to runner events (the run log itself is written by the runner)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evals.console import log_console
from evals.run.events import CheckFailed, Event, RunFinished, RunStarted, ScenarioFinished


class ConsoleReporter:
    """A rich progress bar over all scenario calls, plus one line per failed check."""

    def __init__(self, console: Console | None = None, *, show_failures: bool = True) -> None:
        self.console = console or log_console()
        self.show_failures = show_failures
        self._progress: Progress | None = None
        self._task: Any = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._progress = Progress(
                TextColumn("[bold]evals[/] {task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(event.target, total=event.total)
        elif isinstance(event, ScenarioFinished) and self._progress is not None:
            self._progress.advance(self._task)
        elif isinstance(event, CheckFailed) and self.show_failures:
            where = f"{event.scenario_id}" + (f" [{event.mode}]" if event.mode != "default" else "")
            self.console.print(f"[red]FAIL[/] {where}: {event.outcome.message}")
        elif isinstance(event, RunFinished):
            if self._progress is not None:
                self._progress.stop()
                self._progress = None
            counts = event.summary.counts
            self.console.print(
                f"[bold]{counts.get('passed', 0)}/{counts.get('scenarios', 0)} passed[/], "
                f"{counts.get('failed', 0)} failed, {counts.get('errors', 0)} errors "
                f"in {event.summary.duration_s:.1f}s"
            )


class Collector:
    """Keeps every event (tests and programmatic callers)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]
