"""`make gate-chroma`: the golden gate with the vector path served by a Chroma server.

Starts `chroma run` on a free loopback port over a scratch directory, copies the built
collections into it (`index.chroma_load`), runs the same eval + gate as `make gate` with
`OCM_CHROMA_URL` pointing at it, and stops the Chroma server whatever happens. The exit code
is the gate's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from reference_server.config import Settings
from reference_server.index.chroma_load import load_collections
from scale.procs import chroma_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scale.chroma_gate", description=__doc__)
    parser.add_argument("--target", required=True, help="eval target, e.g. inprocess:...")
    parser.add_argument("--out", type=Path, default=Path("reports/runs/gate-chroma"))
    parser.add_argument("--config", default="evals/gate.yaml")
    parser.add_argument("--baseline", default="evals/baseline.json")
    args = parser.parse_args(argv)
    index_dir = Settings.from_env().index_dir
    with tempfile.TemporaryDirectory(prefix="ocm-chroma-") as scratch:
        data = Path(scratch)
        with chroma_server(data / "data", log=args.out.parent / "chroma-server.log") as url:
            counts = load_collections(index_dir, url)
            print(
                f"Chroma server {url}: loaded {sum(counts.values())} chunks in {len(counts)} collections"
            )
            env = {**os.environ, "OCM_CHROMA_URL": url}
            py = sys.executable
            run = [py, "-m", "evals", "run", "--target", args.target, "--golden", "golden"]
            run += ["--out", str(args.out), "--ablation", "--concurrency", "2"]
            code = subprocess.call(run, env=env)
            if code != 0:
                return code
            gate = [py, "-m", "evals", "gate", "--run", str(args.out), "--config", args.config]
            gate += ["--baseline", args.baseline, "--require-baseline"]
            return subprocess.call(gate, env=env)


if __name__ == "__main__":
    sys.exit(main())
