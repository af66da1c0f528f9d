"""The planted bait a run checks against: a canary secret for the server's environment, a
root directory the client declares, and a marked file outside that root. Finding the canary or the marker in anything the server returns is
proof of a leak or an escape, with no guessing about what a secret looks like. (A stdio
server keeps the harness's working directory: commands such as ``python -m pkg`` depend on
it.)

For the path probes a stdio server also gets a ``HOME`` of its own (outside the root, the
marker in it) and a variable naming the outside folder, so ``~/x`` and ``$VAR/x`` escapes
reach a file the harness planted; the root holds a symbolic link that points out of it.
Package caches stay where they were, so launchers such as ``uvx`` and ``npx`` still work.
It also gets a temp folder of its own (``TMPDIR``, ``TMP``, ``TEMP``): the root, the outside
folder, that ``HOME`` and the temp folder are the trees :mod:`.files` lists around each call."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evals.conformance.canary import CANARY_ENV, new_canary

OUTSIDE_ENV = "OCM_PROBE_OUTSIDE"
HOME_MARKER = "ocm-marker.txt"
LINK_NAME = "linked-out"
# Where launchers keep what they downloaded, pinned to the real home before HOME moves.
CACHE_HOMES = {
    "XDG_CACHE_HOME": ".cache",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CONFIG_HOME": ".config",
    "PYTHONUSERBASE": ".local",
    "npm_config_cache": ".npm",
    "GOPATH": "go",
    "CARGO_HOME": ".cargo",
    "RUSTUP_HOME": ".rustup",
}


@dataclass(frozen=True)
class Sandbox:
    base: Path
    root: Path
    outside_file: Path
    marker: str
    canary_value: str
    canary_env: str = CANARY_ENV

    @classmethod
    def create(cls) -> Sandbox:
        base = Path(tempfile.mkdtemp(prefix="evals-security-"))
        root = base / "root"
        outside = base / "outside"
        root.mkdir()
        outside.mkdir()
        (root / "notes.txt").write_text("a file inside the declared root\n", encoding="utf-8")
        marker = f"OCM-OUTSIDE-{secrets.token_hex(12)}"
        outside_file = outside / "secret.txt"
        outside_file.write_text(f"{marker}\n", encoding="utf-8")
        (base / "home").mkdir()
        (base / "tmp").mkdir()
        (base / "home" / HOME_MARKER).write_text(f"{marker}\n", encoding="utf-8")
        (root / LINK_NAME).symlink_to(outside, target_is_directory=True)
        return cls(
            base=base,
            root=root,
            outside_file=outside_file,
            marker=marker,
            canary_value=new_canary(),
        )

    @property
    def root_uri(self) -> str:
        return self.root.as_uri()

    @property
    def home(self) -> Path:
        """The ``HOME`` a stdio server gets: outside the root, the marker file in it."""
        return self.base / "home"

    @property
    def tmp(self) -> Path:
        """The temp folder a stdio server gets (``TMPDIR``)."""
        return self.base / "tmp"

    @property
    def trees(self) -> list[Path]:
        """The folders whose files are compared before and after every call."""
        return [self.root, self.outside_file.parent, self.home, self.tmp]

    def server_env(self) -> dict[str, str]:
        """What a stdio server's environment gets on top of the harness's own."""
        real_home = Path.home()
        caches = {k: str(real_home / v) for k, v in CACHE_HOMES.items() if k not in os.environ}
        return {
            **caches,
            self.canary_env: self.canary_value,
            "HOME": str(self.home),
            OUTSIDE_ENV: str(self.outside_file.parent),
            **{name: str(self.tmp) for name in ("TMPDIR", "TMP", "TEMP")},
        }

    def remove(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)
