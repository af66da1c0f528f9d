"""`ocm chroma-load --url http://HOST:PORT`: copy the built
collections into a Chroma server, so replicas on several machines share one vector store.

The collections are copied with their stored embeddings (nothing is re-embedded), replacing
any same-named collection on the server; each copy carries the index's corpus hash so a
mismatch between a replica's SQLite index and the shared store can be seen. Counts are
checked after the copy.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from reference_server.config import Settings
from reference_server.retrieval import chroma_client
from reference_server.retrieval.vector import MetadataValue

BATCH = 1000


def load_collections(index_dir: Path, url: str, quiet: bool = False) -> dict[str, int]:
    """Copy every collection of `index_dir/chroma` to the Chroma server at `url`; counts."""
    local = chroma_client.connect(Settings(index_dir=index_dir))
    remote = chroma_client.connect(Settings(index_dir=index_dir, chroma_url=url))
    manifest_path = index_dir / "manifest.json"
    corpus_hash = (
        json.loads(manifest_path.read_text()).get("corpus_hash", "")
        if manifest_path.exists()
        else ""
    )
    sources = [local.get_collection(c.name) for c in local.list_collections()]
    counts: dict[str, int] = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=quiet,
    ) as progress:
        task = progress.add_task(f"loading {url}", total=sum(source.count() for source in sources))
        for source in sources:
            if source.name in {c.name for c in remote.list_collections()}:
                remote.delete_collection(source.name)
            # a collection's metadata: scalars (the build's "hnsw:space" and "embedder")
            metadata: dict[str, MetadataValue] = {
                **(source.metadata or {}),
                "corpus_hash": corpus_hash,
            }
            target = remote.create_collection(source.name, metadata=metadata)
            for page in chroma_client.pages(
                source, ["embeddings", "documents", "metadatas"], page=BATCH
            ):
                target.add(
                    ids=page["ids"],
                    embeddings=page["embeddings"],
                    documents=page["documents"],
                    metadatas=page["metadatas"],
                )
                progress.advance(task, len(page["ids"]))
            counts[source.name] = target.count()
            if counts[source.name] != source.count():
                raise RuntimeError(
                    f"{source.name}: {counts[source.name]} rows on the server, "
                    f"{source.count()} in the index"
                )
    return counts


def build_parser(prog: str = "ocm chroma-load") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument(
        "--url", required=True, help="the Chroma server, e.g. http://127.0.0.1:8001"
    )
    parser.add_argument(
        "--index-dir", type=Path, help="the built index (default: OCM_INDEX_DIR or build/index)"
    )
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Copy the built collections into the Chroma server at `--url`; print the counts."""
    settings = Settings.from_env(**({"index_dir": args.index_dir} if args.index_dir else {}))
    counts = load_collections(settings.index_dir, args.url)
    print(json.dumps(counts, indent=2))
    return 0
