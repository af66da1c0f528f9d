"""What a call does: files created or changed in the trees the server can reach (its root,
HOME and temp folder) are listed per call, a read-only tool that writes fails; a path tool
whose answer shows ``~`` expanded outside its root escapes even when no file's text comes
back. Expected values come from the fixtures' source (file_writer.py, vcs_paths.py)."""

from __future__ import annotations

from pathlib import Path

from security_servers import stdio

from evals.run.security.files import changes, snapshot
from evals.run.security.findings import SecurityReport
from evals.run.security.paths import revealed
from evals.run.security.runner import Options, run_security


async def _run(spec: str, *families: str, **options: object) -> SecurityReport:
    report = await run_security(spec, Options(families=families, **options))  # type: ignore[arg-type]
    assert report.error is None, report.error
    return report


def test_created_changed_and_deleted_files_are_listed(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("a", encoding="utf-8")
    (tmp_path / "changed.txt").write_text("a", encoding="utf-8")
    (tmp_path / "gone.txt").write_text("a", encoding="utf-8")
    before = snapshot([tmp_path])
    (tmp_path / "changed.txt").write_text("b", encoding="utf-8")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new.txt").write_text("abc", encoding="utf-8")
    found = {(Path(c.path).name, c.change, c.size) for c in changes(before, snapshot([tmp_path]))}
    assert found == {
        ("changed.txt", "changed", 1),
        ("gone.txt", "deleted", 1),
        ("new.txt", "created", 3),
    }


def test_an_answer_naming_the_expanded_path_is_an_escape(tmp_path: Path) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    error = f"Error executing tool git_status: {home}/ocm-marker.txt is not a git repository"
    assert revealed(error, "~/ocm-marker.txt", root, home) == f"{home}/ocm-marker.txt"
    walk = f"{tmp_path}/outside/secret.txt: permission denied"
    assert (
        revealed(walk, "%2e%2e/outside/secret.txt", root, home) == f"{tmp_path}/outside/secret.txt"
    )
    # the path as the caller spelled it, a path left inside the root, a '..' only echoed
    assert (
        revealed(f"{tmp_path}/outside/secret.txt", f"{tmp_path}/outside/secret.txt", root, home)
        is None
    )
    assert revealed(f"{root}/~/ocm-marker.txt not found", "~/ocm-marker.txt", root, home) is None
    assert (
        revealed(f"{root}/../outside/secret.txt not found", "../outside/secret.txt", root, home)
        is None
    )


async def test_a_read_only_tool_that_writes_under_home_fails() -> None:
    report = await _run(stdio("file_writer"), "reach", "effects", allow_writes=True)
    by_check = {f.check: f for f in report.findings}
    assert set(by_check) == {"read_only_write", "file_written"}
    wrote = by_check["read_only_write"]
    assert wrote.tool == "lookup" and wrote.level == "error" and wrote.grade == "security"
    assert ".lookup_history" in wrote.message and "reach call" in wrote.message
    listed = by_check["file_written"]
    assert listed.tool == "save_note" and listed.level == "warning"
    assert "/home/notes/" in (listed.evidence or "")


async def test_read_only_tools_alone_are_probed_and_their_writes_seen() -> None:
    report = await _run(stdio("file_writer"), "reach", "effects")
    assert [(f.check, f.tool) for f in report.findings] == [("read_only_write", "lookup")]
    assert {s.tool for s in report.skipped} == {"save_note"}


async def test_a_path_error_showing_tilde_expanded_outside_the_root_is_an_escape() -> None:
    report = await _run(stdio("vcs_paths", "--root", "{root}"), "paths", "path_probes")
    by_tool = {f.tool: f for f in report.findings}
    assert set(by_tool) == {"status", "list_dir"}
    escape = by_tool["status"]
    assert (escape.check, escape.level) == ("path_escape_expansion", "error")
    assert "/home/ocm-marker.txt" in (escape.evidence or "")
    refused = by_tool["list_dir"]  # expanded, then checked against the root and refused
    assert (refused.check, refused.level) == ("path_expanded_refused", "warning")
