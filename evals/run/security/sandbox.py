"""The planted bait a run checks against: a canary secret for the server's environment, a
root directory the client declares, and a marked file outside that root. Finding the canary or the marker in anything the server returns is
proof of a leak or an escape, with no guessing about what a secret looks like. (A stdio
server keeps the harness's working directory: commands such as ``python -m pkg`` depend on
it.)"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evals.conformance.canary import CANARY_ENV, new_canary


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

    def remove(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)
