"""Open a report page in headless Chromium (Debian's ``chromium``) the way a person would.

The page's folder is served on a free loopback port and every request is recorded, so a test
sees whether the page asked for anything besides itself (a self-contained page asks for
nothing else, so nothing can fail to load); Chromium takes a screenshot and dumps the DOM it
rendered. Flags as in the machine notes: no sandbox (root), no background networking.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


@dataclass
class PageVisit:
    dom: str
    screenshot: Path
    requests: list[tuple[str, int]] = field(default_factory=list)  # (path, status)


class _Recorder(SimpleHTTPRequestHandler):
    seen: list[tuple[str, int]]

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        self.seen.append((self.path, int(code) if str(code).isdigit() else 0))

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


def visit(page: Path, screenshot: Path, *, width: int = 1280, height: int = 2400) -> PageVisit:
    """Serve ``page``'s folder on 127.0.0.1:<free port>, open it, screenshot, dump the DOM."""
    if CHROMIUM is None:
        raise RuntimeError("chromium is not installed (apt-get install chromium)")
    seen: list[tuple[str, int]] = []
    handler = functools.partial(
        type("Recorder", (_Recorder,), {"seen": seen}), directory=str(page.parent)
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{page.name}"
        with tempfile.TemporaryDirectory() as profile:
            done = subprocess.run(
                [
                    CHROMIUM,
                    *FLAGS,
                    f"--user-data-dir={profile}",
                    f"--window-size={width},{height}",
                    f"--screenshot={screenshot}",
                    "--dump-dom",
                    url,
                ],
                capture_output=True,
                text=True,
                timeout=90,
                check=False,
            )
        if done.returncode != 0:
            raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
        return PageVisit(done.stdout, screenshot, list(seen))
    finally:
        server.shutdown()
        server.server_close()
