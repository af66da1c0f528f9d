"""`python -m reference_server.index.synthetic --factor 10`: a scaled copy of the built index.

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
import re
import shutil
import sqlite3
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from reference_server import stored_query_vectors
from reference_server.catalog import BM25_SPECS
from reference_server.config import Settings
from reference_server.index.bm25_impacts import write_impacts
from reference_server.retrieval import chroma_client

PREFIX = "synthetic"
ROWID_STRIDE = 10**9  # copy k of rowid r gets rowid r + k * stride (base tables and FTS agree)
NOISE_SIGMA = 0.025  # per dimension, for 384-d unit vectors: cosine to the original ~0.9
CATEGORICAL_MAX = 50  # a text column with at most this many distinct values is a category
SKIP_TABLES = {"ingestion_log", "query_cache"}  # build records and caches, not corpus
FTS_SHADOW = re.compile(r"_(data|idx|content|docsize|config)$")
# derived from a whole FTS table, so rewritten for the scaled table rather than copied
IMPACT_TABLES = {t for spec in BM25_SPECS for t in (spec.terms_table, spec.rows_table)}
TITLE = re.compile(r"^(title|heading)$|_(title|heading|name)$")
TAGS = re.compile(r"(^|_)tags$")  # filter tokens (an FTS column): kept, so filters still apply
ID_NAME = re.compile(r"^id$|_(id|ids|uid|by|of)$")
JSON_ID = re.compile(r"^(id|key)$|_(id|key)$")
WORD = re.compile(r"[A-Za-z]{4,}")
BATCH = 2000


def synthetic_id(value: str, k: int) -> str:
    """Copy k's id; ';'-joined id lists are mapped item by item."""
    return ";".join(f"{PREFIX}-{k}-{part}" if part else part for part in value.split(";"))


def synthetic_title(value: str, k: int) -> str:
    return f"{PREFIX} {k}: {mutate_text(value, k)}"


def _suffix(k: int) -> str:
    letters = ""
    while True:
        k, r = divmod(k, 26)
        letters = chr(ord("a") + r) + letters
        if k == 0:
            return letters


def mutate_text(text: str, k: int) -> str:
    """About half the longer words get copy k's suffix (deterministic: same text, same result)."""

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        if zlib.crc32(f"{word.lower()}|{k}".encode()) % 2:
            return word + "q" + _suffix(k)
        return word

    return WORD.sub(swap, text)


def _mutate_json(value: Any, k: int, name: str = "") -> Any:
    """Strings under an identifier name (`key`, `id`, `*_id`) become copy k's id, like id
    columns: a program block's `key` names the program, and copies of a document are other
    programs, not ten more documents of the same one (which would change what real queries
    answer instead of what they cost)."""
    if isinstance(value, str):
        if JSON_ID.search(name):
            return synthetic_id(value, k)
        # One-word values are levels, topics and codes that readers compare with fixed sets.
        return mutate_text(value, k) if " " in value.strip() else value
    if isinstance(value, list):
        return [_mutate_json(v, k, name) for v in value]
    if isinstance(value, dict):
        return {key: _mutate_json(v, k, key) for key, v in value.items()}
    return value


def mutate_value(value: Any, k: int) -> Any:
    """Free text mutated; JSON objects/arrays keep their structure and keys."""
    if not isinstance(value, str) or not value:
        return value
    if value[0] in "[{":
        try:
            return json.dumps(_mutate_json(json.loads(value), k))
        except ValueError:
            pass
    return mutate_text(value, k)


Transform = Callable[[Any, int], Any]


def _keep(value: Any, k: int) -> Any:
    return value


def _as_id(value: Any, k: int) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value + k * ROWID_STRIDE
    return synthetic_id(value, k) if isinstance(value, str) and value else value


def _as_title(value: Any, k: int) -> Any:
    return synthetic_title(value, k) if isinstance(value, str) and value else value


@dataclass
class Roles:
    """What each column / metadata key is: 'id', 'title', 'category' or 'text'."""

    by_name: dict[str, str]

    def transform(self, name: str) -> Transform:
        role = self.by_name.get(name) or (
            "category" if TAGS.search(name) else "title" if TITLE.search(name) else "text"
        )
        return {"id": _as_id, "title": _as_title, "category": _keep, "text": mutate_value}[role]


# ------------------------------------------------------------------------------- SQLite
def corpus_tables(conn: sqlite3.Connection) -> tuple[list[str], list[str]]:
    """(base tables, FTS5 tables) that hold corpus records (FTS shadow tables excluded)."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    fts = [name for name, sql in rows if "USING FTS5" in (sql or "").upper()]
    base = [
        name
        for name, _ in rows
        if name not in fts
        and not name.startswith("sqlite_")
        and name not in SKIP_TABLES
        and not any(name.startswith(f + "_") and FTS_SHADOW.search(name) for f in fts)
        and name not in IMPACT_TABLES
    ]
    return base, fts


_PRIORITY = {"id": 3, "title": 2, "text": 1, "category": 0}


def _column_role(
    col: str, kind: str | None, distinct: int, total: int, keyed: set[str], indexed: set[str]
) -> str:
    if kind == "integer" and col in keyed:
        return "id"  # an integer key: copies are offset like rowids
    if kind not in ("text", None):
        return "category"
    if col in keyed or ID_NAME.search(col) or (col in indexed and distinct > CATEGORICAL_MAX):
        return "id"
    if TITLE.search(col):
        return "title"
    if distinct <= CATEGORICAL_MAX and distinct * 2 < total:
        return "category"
    return "text"


def refers_to_id(name: str, ids: set[str]) -> bool:
    """`dins`, `lu_codes`, `lowest_cost_din`: a list of, or a named, reference to an id."""
    return name.removesuffix("s") in ids or any(name.endswith("_" + i) for i in ids)


def sql_roles(conn: sqlite3.Connection) -> Roles:
    """Column roles for one database, by column name (FTS tables reuse their base names).

    A name keeps its strongest role across tables (id > title > text > category), so the
    same value is transformed alike wherever it appears and references stay consistent."""
    base, _ = corpus_tables(conn)
    roles: dict[str, str] = {}
    for table in base:
        info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
        keyed = {r[1] for r in info if r[5]}
        keyed |= {r[3] for r in conn.execute(f'PRAGMA foreign_key_list("{table}")')}
        indexed = set()
        for idx in conn.execute(f'PRAGMA index_list("{table}")').fetchall():
            indexed |= {r[2] for r in conn.execute(f'PRAGMA index_info("{idx[1]}")')}
        total = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        for _, col, *_rest in info:
            kind, distinct, structured = conn.execute(
                f'SELECT max(typeof("{col}")), count(DISTINCT "{col}"), '
                f"max(substr(\"{col}\", 1, 1) IN ('{{', '[')) FROM \"{table}\""
            ).fetchone()
            role = _column_role(col, kind, distinct, total, keyed, indexed)
            if role == "category" and structured:
                role = "text"  # JSON blocks are records (their ids and text are copied as such)
            if _PRIORITY[role] > _PRIORITY[roles.get(col, "category")] or col not in roles:
                roles[col] = role
    ids = {name for name, role in roles.items() if role == "id"}
    for name in roles:
        if refers_to_id(name, ids):
            roles[name] = "id"
    return Roles(roles)


def _copy_table(
    conn: sqlite3.Connection, table: str, roles: Roles, factor: int, advance: Callable[[int], None]
) -> int:
    """Insert copies 1..factor-1 of the table's original rows (rowid r -> r + k * stride)."""
    columns = [d[0] for d in conn.execute(f'SELECT * FROM "{table}" LIMIT 0').description]
    info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
    # An INTEGER PRIMARY KEY is the rowid itself: its (offset) value sets the rowid.
    rowid_alias = sum(1 for r in info if r[5]) == 1 and any(
        r[5] and r[2].upper() == "INTEGER" for r in info
    )
    names = columns if rowid_alias else ["rowid", *columns]
    transforms = [roles.transform(c) for c in columns]
    rows = conn.execute(
        f'SELECT rowid, * FROM "{table}" WHERE rowid < ?', (ROWID_STRIDE,)
    ).fetchall()
    insert = (
        f'INSERT INTO "{table}" ({", ".join(f"{chr(34)}{c}{chr(34)}" for c in names)}) '
        f"VALUES ({', '.join('?' * len(names))})"
    )
    for k in range(1, factor):
        batch = [
            (
                *(() if rowid_alias else (row[0] + k * ROWID_STRIDE,)),
                *(t(v, k) for t, v in zip(transforms, row[1:], strict=True)),
            )
            for row in rows
        ]
        for start in range(0, len(batch), BATCH):
            conn.executemany(insert, batch[start : start + BATCH])
            advance(len(batch[start : start + BATCH]))
    return len(rows) * factor


def scale_database(path: Path, factor: int, progress: Progress) -> dict[str, int]:
    """Add the synthetic copies to one SQLite file in place; row counts per table."""
    conn = sqlite3.connect(path)
    try:
        roles = sql_roles(conn)
        base, fts = corpus_tables(conn)
        tables = base + fts
        total = sum(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables)
        task = progress.add_task(f"{path.name}: synthetic rows", total=total * (factor - 1))
        counts = {
            t: _copy_table(conn, t, roles, factor, lambda n: progress.advance(task, n))
            for t in tables
        }
        # BM25 impacts depend on the whole FTS table (idf, average length): written again
        specs = [spec for spec in BM25_SPECS if spec.fts_table in fts]
        impacts = progress.add_task(f"{path.name}: BM25 impacts", total=len(specs))
        for spec in specs:
            write_impacts(conn, spec)
            progress.advance(impacts)
        conn.commit()  # no VACUUM: it renumbers rowids, and FTS rows are joined by rowid
        return counts
    finally:
        conn.close()


# ------------------------------------------------------------------------------- Chroma
def metadata_roles(metadatas: list[dict[str, Any]], sql: Roles) -> Roles:
    """Metadata keys: an id if SQL's same name (or what it refers to) is one, else by kind."""
    ids = {name for name, role in sql.by_name.items() if role == "id"}
    roles: dict[str, str] = {}
    for key in {key for m in metadatas for key in m}:
        values = [m[key] for m in metadatas if key in m]
        if not all(isinstance(v, str) for v in values):
            roles[key] = "category"
        elif key in ids or refers_to_id(key, ids) or ID_NAME.search(key):
            roles[key] = "id"
        elif TITLE.search(key):
            roles[key] = "title"
        elif any(v[:1] in ("{", "[") for v in values):
            roles[key] = "text"  # JSON blocks, as in `sql_roles`
        elif len(set(values)) <= CATEGORICAL_MAX and len(set(values)) * 2 < len(values):
            roles[key] = "category"
        else:
            roles[key] = "text"
    return Roles(roles)


def _noisy(vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    out = vectors + rng.normal(0.0, NOISE_SIGMA, size=vectors.shape).astype(vectors.dtype)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def scale_collections(
    source_dir: Path, out_dir: Path, factor: int, sql: Roles, progress: Progress
) -> dict[str, int]:
    """Copy every collection with `factor - 1` synthetic copies of each chunk; counts."""
    source = chroma_client.connect(Settings(index_dir=source_dir))
    (out_dir / "chroma").mkdir(parents=True, exist_ok=True)
    target = chroma_client.connect(Settings(index_dir=out_dir), writable=True)
    collections = [source.get_collection(c.name) for c in source.list_collections()]
    task = progress.add_task("chroma: chunks", total=sum(c.count() for c in collections) * factor)
    counts: dict[str, int] = {}
    for col in collections:
        rows: dict[str, list[Any]] = {"ids": [], "documents": [], "metadatas": [], "embeddings": []}
        for page in chroma_client.pages(col, ["documents", "metadatas", "embeddings"]):
            for key in rows:
                rows[key].extend(page[key])
        vectors = np.asarray(rows["embeddings"], dtype=np.float32)
        roles = metadata_roles(rows["metadatas"], sql)
        out = target.create_collection(col.name, metadata=col.metadata)
        rng = np.random.default_rng(zlib.crc32(col.name.encode()))
        for k in range(factor):
            ids = rows["ids"] if k == 0 else [synthetic_id(i, k) for i in rows["ids"]]
            docs = (
                rows["documents"]
                if k == 0
                else [synthetic_title(d or "", k) for d in rows["documents"]]
            )
            metas = (
                rows["metadatas"]
                if k == 0
                else [
                    {key: roles.transform(key)(v, k) for key, v in (m or {}).items()}
                    for m in rows["metadatas"]
                ]
            )
            embs = vectors if k == 0 else _noisy(vectors, rng)
            for start in range(0, len(ids), BATCH):
                end = start + BATCH
                out.add(
                    ids=ids[start:end],
                    documents=docs[start:end],
                    metadatas=metas[start:end],
                    embeddings=embs[start:end],
                )
                progress.advance(task, len(ids[start:end]))
        counts[col.name] = out.count()
    return counts


# ------------------------------------------------------------------------------- build
def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _fingerprint(source_dir: Path, factor: int) -> str:
    manifest = json.loads((source_dir / "manifest.json").read_text())
    digest = hashlib.sha256(f"{manifest['corpus_hash']}|{factor}".encode())
    digest.update(Path(__file__).read_bytes())
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
        # the same calls find them at every factor, so factors differ only in corpus size.
        for name in (stored_query_vectors.TEXTS_FILE, stored_query_vectors.VECTORS_FILE):
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reference_server.index.synthetic", description=__doc__
    )
    parser.add_argument("--factor", type=int, required=True, help="corpus size multiple, e.g. 10")
    parser.add_argument(
        "--source", type=Path, help="the built index (default: OCM_INDEX_DIR or build/index)"
    )
    parser.add_argument("--out", type=Path, help="default: <source>-x<factor>")
    parser.add_argument("--force", action="store_true", help="rebuild even when current")
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
