"""What a call did to the files the server can reach: the sandbox's trees (the declared root,
the folder outside it, the ``HOME`` and temp folder a stdio server gets) are listed before and
after each call (paths, sizes, modification times, and a hash of every small file), and the
difference is the call's effect. Symbolic links are recorded, never followed. The harness's
own files at the sandbox's top (the server's stderr log, the command probes' logs) are not in
these trees."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict

HASH_LIMIT = 256 * 1024  # files up to this size are hashed; larger ones compared by size and mtime
ENTRY_LIMIT = 20_000  # a tree this large is listed no further (the snapshot says so)

Change = Literal["created", "changed", "deleted"]


@dataclass(frozen=True)
class Entry:
    size: int
    mtime_ns: int
    digest: str  # sha256 of a small file's bytes, the link target for a link, "" otherwise


class FileChangeJson(TypedDict):
    path: str
    change: Change
    size: int


@dataclass(frozen=True)
class FileChange:
    """One file a call created, changed or deleted; ``path`` as the server would name it."""

    path: str
    change: Change
    size: int

    def to_json(self) -> FileChangeJson:
        return {"path": self.path, "change": self.change, "size": self.size}

    def describe(self) -> str:
        return f"{self.change} {self.path} ({self.size:,} bytes)"


@dataclass(frozen=True)
class Snapshot:
    entries: dict[str, Entry]
    truncated: bool = False


def _entry(path: Path) -> Entry | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    if path.is_symlink():
        try:
            return Entry(st.st_size, st.st_mtime_ns, "link:" + os.readlink(path))
        except OSError:
            return Entry(st.st_size, st.st_mtime_ns, "link")
    digest = ""
    if st.st_size <= HASH_LIMIT:
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            digest = ""
    return Entry(st.st_size, st.st_mtime_ns, digest)


def snapshot(trees: list[Path]) -> Snapshot:
    """Every file and link under ``trees`` (folders themselves are not compared)."""
    entries: dict[str, Entry] = {}
    for tree in trees:
        if not tree.is_dir():
            continue
        for folder, dirs, names in os.walk(tree, followlinks=False):
            base = Path(folder)
            links = [d for d in dirs if (base / d).is_symlink()]
            for name in [*names, *links]:
                if len(entries) >= ENTRY_LIMIT:
                    return Snapshot(entries, truncated=True)
                entry = _entry(base / name)
                if entry is not None:
                    entries[str(base / name)] = entry
    return Snapshot(entries)


def changes(before: Snapshot, after: Snapshot) -> list[FileChange]:
    """Files created, changed (size, content, link target or modification time) or deleted."""
    out: list[FileChange] = []
    for path, entry in after.entries.items():
        old = before.entries.get(path)
        if old is None:
            out.append(FileChange(path, "created", entry.size))
        elif old != entry:
            out.append(FileChange(path, "changed", entry.size))
    for path, entry in before.entries.items():
        if path not in after.entries and not after.truncated:
            out.append(FileChange(path, "deleted", entry.size))
    return sorted(out, key=lambda c: c.path)
