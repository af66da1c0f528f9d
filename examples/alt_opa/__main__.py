"""`python -m examples.alt_opa`: serve opa.search_sections, opa.get_section,
opa.freshness_probe, opa.policy_check, opa.clinical_tools and opa.ipac_guidance over stdio."""

from __future__ import annotations

import sys

from examples.alt_opa.corpus import CorpusError
from examples.alt_opa.server import from_env


def main() -> int:
    try:
        server = from_env()
    except (CorpusError, ValueError) as exc:
        print(f"alt_opa: {exc}", file=sys.stderr)
        return 2
    server.run(transport="stdio", show_banner=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
