"""Contract diff of two live servers, no golden files: list both targets' tools (every member
of each ``tools/list`` entry, as published: names, titles, descriptions, annotations, input and
output schemas down to argument descriptions, defaults, enums and examples, ``execution``,
``_meta``) and diff them with :mod:`evals.contract`. ``ocm contract --a SPEC
--b SPEC`` writes ``contract.json``, ``contract.md`` and the run record.

Every text a model reads that changed or came with a new argument or tool is printed in full,
old -> new, marked **for review**; one that adds what :func:`evals.contract_text.suspicion`
looks for (a request for the conversation, file contents, credentials or environment
variables, hiding something from the user, the poisoning patterns, instruction-like wording,
invisible characters) is marked **suspicious**.

Both sides are listed at once, within ``--deadline`` (connect, initialize and ``tools/list``
of both): at the deadline the run is cut short, the record is written with status
``cut_short`` naming each side not read and how far it got, and the exit code is 2.

Exit codes: 0 no breaking or suspicious change from A to B; 1 a breaking change or a
suspicious text; 2 harness error (a target could not be started or listed) or cut short at
the deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from evals import contract
from evals.cli_options import out_dir, spec
from evals.console import log_console
from evals.contract_change import Change, ChangeJson
from evals.render import Bullets, Document, Paragraph, Table, write
from evals.run.targets import TargetError, make_target
from ocm_common.json_types import JsonObject, JsonValue
from ocm_common.run_record import Clock, RecordHeader, Status, header, status_for, write_record

DEADLINE_S = 120.0
CANCEL_GRACE_S = 5.0  # past the deadline, for a side's connection to close once cancelled
EXIT_TEXT = (
    "exit status: 0 no breaking or suspicious change from A to B; 1 a breaking change or a "
    "suspicious text (a changed or added text that asks for the conversation, file contents, "
    "credentials, secrets, tokens or environment variables, to hide something from the user, "
    "or adds instruction-like wording or invisible characters); 2 harness error, or cut short "
    "at --deadline (the record names what was not read)."
)


@dataclass
class Progress:
    """How far listing one side got (what a cut-short record names), and the listing as soon
    as it arrived (a side whose session was still closing at the deadline was read)."""

    stage: str = "not started"
    entries: list[JsonObject] | None = None


class MarkedChangeJson(ChangeJson):
    """A change as ``contract.json`` lists it: its fields and how it is marked."""

    marks: str


class ContractJson(TypedDict):
    """``contract.json`` (and the run record's body): both sides, their tools and every change."""

    a: str
    b: str
    status: Status
    exit_code: int
    error: str | None
    deadline_s: float | None
    not_read: list[dict[str, str]]
    tools_a: list[str]
    tools_b: list[str]
    added: list[str]
    removed: list[str]
    breaking: int
    suspicious: int
    for_review: int
    compatibility: int
    poisoning: int
    changes: list[MarkedChangeJson]


STAGE_CONNECTING = "connecting (start, initialize)"
STAGE_LISTING = "tools/list sent, no answer"
STAGE_READ = "listed"


@dataclass
class ContractDiff:
    a: str
    b: str
    tools_a: list[str] = field(default_factory=list)
    tools_b: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    error: str | None = None
    deadline_s: float | None = None
    # cut short at the deadline: each side not read, {side, spec, stage}
    not_read: list[dict[str, str]] = field(default_factory=list)

    @property
    def cut_short(self) -> bool:
        return bool(self.not_read)

    @property
    def listed(self) -> list[str]:
        """The sides read (both, unless cut short or an error)."""
        unread = {n["side"] for n in self.not_read}
        return [side for side in ("A", "B") if side not in unread] if not self.error else []

    @property
    def breaking(self) -> list[Change]:
        return [c for c in self.changes if c.breaking]

    @property
    def suspicious(self) -> list[Change]:
        return [c for c in self.changes if c.suspicious]

    @property
    def for_review(self) -> list[Change]:
        return [c for c in self.changes if c.review]

    def marked(self, concern: str) -> list[Change]:
        return [c for c in self.changes if c.concern == concern]

    @property
    def exit_code(self) -> int:
        if self.error or self.cut_short:
            return 2
        return 1 if self.breaking or self.suspicious else 0

    @property
    def status(self) -> Status:
        return "cut_short" if self.cut_short else status_for(self.exit_code)

    def cut_short_line(self) -> str:
        sides = "; ".join(f"{n['side']} `{n['spec']}` ({n['stage']})" for n in self.not_read)
        return f"cut short at the {self.deadline_s:g} s deadline; not read: {sides}"

    def summary_line(self) -> str:
        if self.cut_short:
            return self.cut_short_line()
        return (
            f"{len(self.changes)} change(s): {len(self.marked('compatibility'))} for "
            f"compatibility ({len(self.breaking)} breaking), {len(self.for_review)} for "
            f"review ({len(self.suspicious)} suspicious)"
        )

    def console_lines(self) -> list[str]:
        """One line per change (rich markup), the breaking and suspicious ones marked; every
        text for review follows in full, old -> new."""
        lines = []
        for c in self.changes:
            mark = (
                "[red]breaking[/] "
                if c.breaking
                else "[red]suspicious[/] "
                if c.suspicious
                else "[yellow]for review[/] "
                if c.review
                else f"[yellow]{c.concern}[/] "
                if c.concern
                else ""
            )
            if c.breaking and c.suspicious:
                mark = "[red]breaking, suspicious[/] "
            lines.append(f"  {mark}{c.pointer}: {c.describe()}")
            if c.review and c.what not in ("property", "tool"):
                lines += [f"      old: {_full(c.before)}", f"      new: {_full(c.after)}"]
        return lines

    def to_json(self) -> ContractJson:
        return {
            "a": self.a,
            "b": self.b,
            "status": self.status,
            "exit_code": self.exit_code,
            "error": self.error,
            "deadline_s": self.deadline_s,
            "not_read": self.not_read,
            "tools_a": self.tools_a,
            "tools_b": self.tools_b,
            "added": sorted(set(self.tools_b) - set(self.tools_a)) if not self.cut_short else [],
            "removed": sorted(set(self.tools_a) - set(self.tools_b)) if not self.cut_short else [],
            "breaking": len(self.breaking),
            "suspicious": len(self.suspicious),
            "for_review": len(self.for_review),
            "compatibility": len(self.marked("compatibility")),
            "poisoning": len(self.marked("poisoning")),
            "changes": [
                {**change, "marks": c.marks}
                for c, change in zip(self.changes, contract.to_json(self.changes), strict=True)
            ],
        }


def _full(value: JsonValue) -> str:
    """A text in full on one line ('(none)' when absent; examples as JSON)."""
    if value is None:
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.replace("\r", "\\r").replace("\n", "\\n")


async def list_surface(
    spec: str, timeout_s: float = 30.0, progress: Progress | None = None
) -> dict[str, JsonObject]:
    """Every tool ``spec`` publishes, ``{name: tools/list entry}`` (one session, bounded);
    ``progress`` follows how far it got."""
    progress = progress or Progress()

    async def listed() -> list[JsonObject]:
        progress.stage = STAGE_CONNECTING
        async with make_target(spec, timeout_s=timeout_s) as target:
            progress.stage = STAGE_LISTING
            progress.entries = await target.list_tools_wire()
            progress.stage = STAGE_READ
            return progress.entries

    try:
        entries = await asyncio.wait_for(listed(), 2 * timeout_s)  # start + initialize + list
    except TimeoutError as exc:
        raise TargetError(f"{spec!r} did not list its tools within {2 * timeout_s:g} s") from exc
    return {str(e.get("name", "")): e for e in entries}


async def diff_targets(
    a: str,
    b: str,
    timeout_s: float = 30.0,
    deadline_s: float = DEADLINE_S,
    progress: dict[str, Progress] | None = None,
) -> ContractDiff:
    """Both sides listed at once and diffed; at ``deadline_s`` whatever is still being read
    is cancelled and named (``not_read``), and nothing is diffed. ``progress`` (one per side,
    ``A`` and ``B``) is filled as the sides are read."""
    sides = {"A": a, "B": b}
    progress = progress if progress is not None else {side: Progress() for side in sides}
    tasks = {
        side: asyncio.create_task(list_surface(target, timeout_s, progress[side]))
        for side, target in sides.items()
    }
    _, pending = await asyncio.wait(
        tasks.values(), timeout=deadline_s, return_when=asyncio.FIRST_EXCEPTION
    )
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=CANCEL_GRACE_S)
    errors = [
        f"{side}: {task.exception()}"
        for side, task in tasks.items()
        if task.done() and not task.cancelled() and task.exception() is not None
    ]
    return assemble(a, b, deadline_s, progress, "; ".join(errors) or None)


def assemble(
    a: str, b: str, deadline_s: float, progress: dict[str, Progress], error: str | None = None
) -> ContractDiff:
    """The diff of what was read: both sides diffed, or the sides not read named."""
    result = ContractDiff(a, b, deadline_s=deadline_s, error=error)
    if error:
        return result
    specs = {"A": a, "B": b}
    surfaces = {
        side: {str(e.get("name", "")): e for e in listed.entries}
        for side, listed in progress.items()
        if listed.entries is not None
    }
    result.tools_a = sorted(surfaces.get("A", {}))
    result.tools_b = sorted(surfaces.get("B", {}))
    result.not_read = [
        {"side": side, "spec": specs[side], "stage": progress[side].stage}
        for side in specs
        if side not in surfaces
    ]
    if not result.not_read:
        result.changes = contract.diff_surfaces(surfaces["A"], surfaces["B"])
    return result


def diff_within(a: str, b: str, timeout_s: float, deadline_s: float) -> ContractDiff:
    """:func:`diff_targets` on its own event loop in a daemon thread, waited for no longer
    than the deadline and the cancellation grace (and a margin): a connection that will not
    close, even when cancelled, cannot hold the command past its deadline. Then what was
    read by the deadline is diffed or named."""
    progress = {side: Progress() for side in ("A", "B")}
    done: list[ContractDiff] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(asyncio.run(diff_targets(a, b, timeout_s, deadline_s, progress)))
        except BaseException as exc:  # reported below, in the calling thread
            failed.append(exc)

    worker = threading.Thread(target=run, name="contract-diff", daemon=True)
    worker.start()
    worker.join(deadline_s + 2 * CANCEL_GRACE_S + 5)
    if done:
        return done[0]
    if failed:
        return assemble(a, b, deadline_s, progress, f"{type(failed[0]).__name__}: {failed[0]}")
    return assemble(a, b, deadline_s, progress)  # still closing: what was read by now


def document(diff: ContractDiff) -> Document:
    doc = Document(title="Contract diff", meta=[f"A `{diff.a}`", f"B `{diff.b}`"])
    if diff.error:
        doc.verdict = Paragraph(f"harness error: {diff.error}", "bad")
        return doc
    if diff.cut_short:
        doc.verdict = Paragraph(diff.cut_short_line(), "bad")
        doc.section(
            "Not read",
            Bullets([f"{n['side']} `{n['spec']}`: {n['stage']}" for n in diff.not_read]),
            Paragraph(
                f"Listed in time: {', '.join(diff.listed) or 'neither'}; nothing was diffed."
            ),
        )
        return doc
    n = len(diff.changes)
    doc.verdict = Paragraph(
        diff.summary_line() if n else "the same tool surface",
        "bad" if diff.exit_code else ("warn" if n else "good"),
    )
    doc.section(
        "Changes from A to B",
        Table(
            ["path", "change", "marked"],
            [[c.pointer, c.describe(), c.marks] for c in diff.changes],
            tones=[
                "bad" if c.breaking or c.suspicious else "warn" if c.concern else "neutral"
                for c in diff.changes
            ],
            note="Paths are JSON pointers: /<tool>/<inputSchema|outputSchema|description|"
            "title|annotations|execution|...>/... Marked: compatibility (breaking: a client "
            "written against A can fail against B), for review (text a model reads, a new "
            "argument or tool) and suspicious (the new text asks for the conversation, file "
            "contents, credentials or environment variables, or to hide something from the "
            "user, or adds instruction-like wording or invisible characters).",
        ),
    )
    texts = [c for c in diff.for_review if c.what not in ("property", "tool")]
    if texts:
        section = doc.section("Texts for review, in full (old -> new)")
        for c in texts:
            section.add(
                Paragraph(f"`{c.pointer}` ({c.marks}{'; ' + c.note if c.note else ''})"),
                Bullets([f"old: {_full(c.before)}", f"new: {_full(c.after)}"]),
            )
    return doc


def write_report(
    diff: ContractDiff, out: Path, head: RecordHeader | None = None
) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "contract.json"
    path.write_text(json.dumps(diff.to_json(), indent=2, ensure_ascii=False, default=str) + "\n")
    if head is not None:
        write_record(out, head, diff.to_json(), [path.name, "contract.md", "contract.html"])
    return {"json": path, **write(document(diff), out, "contract")}


def cmd_contract(args: argparse.Namespace) -> int:
    """``ocm contract``: list, diff, print, write the report and the record."""
    clock = Clock()
    a, b = spec(args.a), spec(args.b)
    diff = diff_within(a, b, args.timeout, args.deadline)
    out = out_dir(args.out, "reports/contract")
    settings = {"timeout_s": args.timeout, "deadline_s": args.deadline}
    head = header(
        "contract",
        clock,
        diff.exit_code,
        target=f"{a} -> {b}",
        settings=settings,
        status=diff.status,
    )
    paths = write_report(diff, out, head)
    console = log_console(stderr=False)
    if diff.error:
        console.print(f"[red]contract: harness error:[/] {diff.error}")
    for line in diff.console_lines():
        console.print(line, soft_wrap=True)
    tone = "[red]contract:[/]" if diff.cut_short else "contract:"
    console.print(
        f"{tone} {diff.summary_line()}; report {paths['markdown']} (and contract.json)",
        soft_wrap=True,
    )
    return diff.exit_code


def extend_parser(parser: argparse.ArgumentParser) -> None:
    """The ``contract`` subcommand's overall deadline, exit codes and command (the parser
    itself is built beside ``security``'s, in evals/run/security/cli.py)."""
    parser.add_argument(
        "--deadline",
        type=float,
        default=DEADLINE_S,
        help=f"seconds for connecting to and listing both targets (default {DEADLINE_S:g}); "
        "at the deadline the record is written with status cut_short, exit 2",
    )
    parser.description = (
        "Contract diff of two live targets' tool surfaces (titles, descriptions, annotations, "
        "schemas down to each argument's texts). Every changed or added text a model reads is "
        "printed in full (old -> new) and marked for review; suspicious ones exit 1."
    )
    parser.epilog = EXIT_TEXT
    parser.set_defaults(func=cmd_contract)
