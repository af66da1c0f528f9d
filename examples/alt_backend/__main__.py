"""``python -m examples.alt_backend``: serve the four look-ups over stdio.

Environment: ``ALT_BACKEND_DATA`` (the shared data folder, default ``<repo>/../shared/data``),
``ALT_BACKEND_DEFECTS`` (comma-separated seeded defects, default none; see config.DEFECTS).
"""

from __future__ import annotations

import logging
import sys

from examples.alt_backend.backend import Backend
from examples.alt_backend.config import DataMissing, active_defects
from examples.alt_backend.server import build_server


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        defects = active_defects()
        backend = Backend.load(defects=defects)
    except (DataMissing, ValueError) as exc:
        print(f"alt_backend: cannot start: {exc}", file=sys.stderr)
        return 2
    server = build_server(backend)
    server.run(transport="stdio", show_banner=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
