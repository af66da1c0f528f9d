"""`ocm index`: build the index unless it is current."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from reference_server.config import Settings
from reference_server.index.build import build_index


def build_parser(prog: str = "ocm index") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=build_index.__doc__ or __doc__)
    parser.add_argument(
        "--force", action="store_true", help="rebuild even when the corpus is unchanged"
    )
    parser.add_argument(
        "--index-dir",
        type=Path,
        help="where to write the index (default: OCM_INDEX_DIR or build/index)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Build the index unless it is current (`--force` rebuilds)."""
    settings = Settings.from_env(**({"index_dir": args.index_dir} if args.index_dir else {}))
    manifest = build_index(settings, force=args.force)
    if manifest["skipped"]:
        print(f"index is current ({settings.index_dir}); nothing to do")
    else:
        print(json.dumps({k: manifest[k] for k in ("tables", "collections", "seconds")}, indent=2))
    return 0
