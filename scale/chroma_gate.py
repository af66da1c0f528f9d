"""`make gate-chroma`: the golden gate with the vector path served by a Chroma server.

Starts `chroma run` on a free loopback port over a scratch directory, copies the built
collections into it (`index.chroma_load`), runs the same eval + gate as `make gate`
(evals/steps.py's `golden_eval_and_gate`, called as a function) with `OCM_CHROMA_URL` pointing
at it, and stops the Chroma server whatever happens. The exit code is the gate's.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evals.steps import golden_eval_and_gate
from reference_server.config import Settings
from reference_server.index.chroma_load import load_collections
from scale.procs import chroma_server


def build_parser(prog: str = "ocm gate-chroma") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--target", required=True, help="eval target, e.g. inprocess:...")
    parser.add_argument("--out", type=Path, default=Path("reports/runs/gate-chroma"))
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """The golden eval and gate with the vector path on a Chroma server; the gate's exit code."""
    index_dir = Settings.from_env().index_dir
    with tempfile.TemporaryDirectory(prefix="ocm-chroma-") as scratch:
        data = Path(scratch)
        with chroma_server(data / "data", log=args.out.parent / "chroma-server.log") as url:
            counts = load_collections(index_dir, url)
            print(
                f"Chroma server {url}: loaded {sum(counts.values())} chunks in {len(counts)} collections"
            )
            with _environment("OCM_CHROMA_URL", url):
                return golden_eval_and_gate(args.target, args.out)


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """`name` set to `value` while the block runs (in-process targets read their settings from
    the environment), then as it was."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
