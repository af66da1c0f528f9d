"""Which Chroma the server talks to: the embedded store in the index, or a Chroma server.

With `OCM_CHROMA_URL` unset the collections are read from `<index>/chroma` in-process (one
machine). With `OCM_CHROMA_URL=http://host:port` every replica queries one Chroma server
(`chroma run`), loaded once by `ocm chroma-load`; SQLite stays
local to each replica. Both return the same chromadb client API, so nothing else changes.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reference_server.config import Settings
from reference_server.errors import IndexMissingError

PAGE = 2000  # rows per `get` page: keeps each HTTP reply small and memory flat

SNAPSHOT_PREFIX = "ocm-chroma-"  # + pid + '-' + random, see `sweep_orphans`
_snapshots: dict[tuple[Path, int], Path] = {}
_snapshot_lock = threading.Lock()


def server_address(url: str) -> tuple[str, int, bool]:
    """(host, port, ssl) from `http(s)://host:port`; a clear error for anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"OCM_CHROMA_URL must look like http://127.0.0.1:8001, got {url!r}")
    ssl = parts.scheme == "https"
    return parts.hostname, parts.port or (443 if ssl else 80), ssl


def connect(settings: Settings, writable: bool = False) -> Any:
    """A chromadb client: HTTP when `settings.chroma_url` is set, else the embedded store.

    Serving reads the embedded store through a private copy; index-time writers (the scale
    generator) pass `writable=True` to open the directory itself.
    """
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    if settings.chroma_url:
        host, port, ssl = server_address(settings.chroma_url)
        return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=chroma_settings)
    if not settings.chroma_dir.exists():
        raise IndexMissingError(str(settings.chroma_dir))
    path = settings.chroma_dir if writable else private_snapshot(settings.chroma_dir)
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


def private_snapshot(chroma_dir: Path) -> Path:
    """A per-process copy of the embedded store, so serving never writes to the built index.

    Chroma's embedded store rewrites its HNSW files (`length.bin`, `data_level0.bin`) and its
    SQLite file whenever a collection is loaded, even for reads only; the built index must stay
    byte-for-byte what `make index` wrote (the fuzz and read-only tests checksum it). One copy
    per source directory and process, removed at exit; a process killed before its exit
    handlers ran (SIGKILL, a hung shutdown) leaves its copy behind, and the next snapshot
    removes it (`sweep_orphans`): at 100x each copy is 4.8 GB.
    """
    source = chroma_dir.resolve()
    marker = source / "chroma.sqlite3"
    key = (source, marker.stat().st_mtime_ns if marker.exists() else 0)  # a rebuilt index: new copy
    with _snapshot_lock:
        if key not in _snapshots or not _snapshots[key].exists():
            sweep_orphans(Path(tempfile.gettempdir()))
            target = Path(tempfile.mkdtemp(prefix=f"{SNAPSHOT_PREFIX}{os.getpid()}-")) / "chroma"
            shutil.copytree(source, target)
            atexit.register(shutil.rmtree, target.parent, True)
            _snapshots[key] = target
        return _snapshots[key]


def sweep_orphans(tmp: Path) -> list[Path]:
    """Remove snapshot copies whose process (the pid in the name) no longer runs."""
    removed = []
    for path in tmp.glob(f"{SNAPSHOT_PREFIX}*"):
        pid = path.name[len(SNAPSHOT_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def pages(collection: Any, include: list[str], page: int = PAGE) -> Iterator[dict[str, Any]]:
    """A collection's rows in pages (one unbounded `get` is too big for an HTTP reply at scale)."""
    offset = 0
    while True:
        data = collection.get(include=include, limit=page, offset=offset)
        if not data["ids"]:
            return
        yield data
        offset += len(data["ids"])
        if len(data["ids"]) < page:
            return
