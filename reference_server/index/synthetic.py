"""`ocm synthetic-index --factor 10`: a scaled copy of the built index.

Measuring how latency and index size grow with the corpus needs a bigger corpus of the same
shape. This module copies the built index (`build/index`, untouched) to its own directory
(`build/index-x10`) and adds `factor - 1` synthetic copies of every record of every table
and every Chroma collection. Copy k of a record:

- **ids** (primary keys, indexed or `*_id` columns, the same names in Chroma metadata; ';'
  lists item by item) become `synthetic-k-<id>`, so references between records stay
  consistent and no golden scenario can ever name one;
- **titles** (`title`, `*_title`, `heading`, `*_heading`, `*_name`) become
  `synthetic k: <title>`;
- **free text** keeps its length and common words but about half of its longer words get a
  copy-specific suffix, so the vocabulary grows with the corpus (as a real larger corpus's
  does) instead of every query matching `factor` times as many rows;
- **JSON blocks** keep their keys and one-word values (levels, topics, codes); longer strings
  are free text, and strings under an identifier key (`key`, `id`, `*_id`) are ids, so a
  copy of a program block is another program;
- numbers, dates, categorical columns (few distinct values) and filter tags are kept;
- **vectors** are the original embedding plus small Gaussian noise (cosine ~0.9 to the
  original), renormalised: same dimension and neighbourhood structure, without spending
  an embedding pass per copy (the 10x build must stay under ten minutes on two cores).

The manifest records the factor, row counts, build time and size; the build is skipped when
the source index, the factor and this generator are unchanged.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from reference_server import static_embedding, stored_query_vectors
from reference_server.config import Settings
from reference_server.index.synthetic_chroma import scale_collections
from reference_server.index.synthetic_sqlite import scale_database, sql_roles
from reference_server.index.synthetic_values import Roles

# The generator's source, hashed into the scaled index's fingerprint: a change to any of it
# builds the scaled index again.
GENERATOR_FILES = tuple(
    Path(__file__).with_name(name)
    for name in (
        "synthetic.py",
        "synthetic_values.py",
        "synthetic_sqlite.py",
        "synthetic_chroma.py",
    )
)


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _fingerprint(source_dir: Path, factor: int) -> str:
    manifest = json.loads((source_dir / "manifest.json").read_text())
    digest = hashlib.sha256(f"{manifest['corpus_hash']}|{factor}".encode())
    for path in GENERATOR_FILES:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def default_out_dir(source_dir: Path, factor: int) -> Path:
    return source_dir.with_name(f"{source_dir.name}-x{factor}")


def build_scaled(
    source_dir: Path, factor: int, out_dir: Path | None = None, force: bool = False
) -> dict[str, Any]:
    """Build (or reuse) the `factor`x index next to `source_dir`; returns its manifest."""
    if factor < 1:
        raise ValueError(f"factor must be >= 1, got {factor}")
    if not (source_dir / "manifest.json").exists():
        raise FileNotFoundError(f"no built index at {source_dir}: run `make index` first")
    out_dir = out_dir or default_out_dir(source_dir, factor)
    fingerprint = _fingerprint(source_dir, factor)
    manifest_path = out_dir / "manifest.json"
    if not force and manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("synthetic", {}).get("fingerprint") == fingerprint:
            return {**manifest, "skipped": True}
    source_manifest = json.loads((source_dir / "manifest.json").read_text())
    started = time.perf_counter()
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    tables: dict[str, int] = {}
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    ) as progress:
        roles: dict[str, str] = {}
        for db in sorted(source_dir.glob("*.db")):
            shutil.copy2(db, tmp / db.name)
            if factor > 1:
                conn = sqlite3.connect(tmp / db.name)
                roles.update(sql_roles(conn).by_name)
                conn.close()
                tables.update(scale_database(tmp / db.name, factor, progress))
        collections = scale_collections(source_dir, tmp, factor, Roles(roles), progress)
        # The real products' stored query vectors (a synthetic copy's texts go to the model):
        # the same calls find them at every factor, so factors differ only in corpus size. The
        # static table too: the copies' vectors are the originals', so their model is the same.
        for name in (
            stored_query_vectors.TEXTS_FILE,
            stored_query_vectors.VECTORS_FILE,
            static_embedding.TABLE_FILE,
        ):
            if (source_dir / name).exists():
                shutil.copy2(source_dir / name, tmp / name)
    manifest = {
        **{
            k: v
            for k, v in source_manifest.items()
            if k not in ("tables", "collections", "seconds")
        },
        "tables": tables or source_manifest.get("tables", {}),
        "collections": collections,
        "seconds": round(time.perf_counter() - started, 1),
        "synthetic": {
            "factor": factor,
            "source": str(source_dir),
            "fingerprint": fingerprint,
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "bytes": dir_bytes(tmp),
            "source_bytes": dir_bytes(source_dir),
        },
    }
    manifest_path_tmp = tmp / "manifest.json"
    manifest_path_tmp.write_text(json.dumps(manifest, indent=2))
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)
    return {**manifest, "skipped": False}


def build_parser(prog: str = "ocm synthetic-index") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--factor", type=int, required=True, help="corpus size multiple, e.g. 10")
    parser.add_argument(
        "--source", type=Path, help="the built index (default: OCM_INDEX_DIR or build/index)"
    )
    parser.add_argument("--out", type=Path, help="default: <source>-x<factor>")
    parser.add_argument("--force", action="store_true", help="rebuild even when current")
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Build (or reuse) the scaled copy; print where, how big, how long."""
    source = args.source or Settings.from_env().index_dir
    manifest = build_scaled(source, args.factor, args.out, args.force)
    out = args.out or default_out_dir(source, args.factor)
    if manifest["skipped"]:
        print(f"{out} is current ({args.factor}x); nothing to do")
    else:
        info = manifest["synthetic"]
        print(
            f"{out}: {args.factor}x in {manifest['seconds']} s, "
            f"{info['bytes'] / 1e6:.1f} MB (source {info['source_bytes'] / 1e6:.1f} MB)"
        )
    return 0
