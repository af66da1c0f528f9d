"""A refused command-line value, said the same way by every command: `error: <what and why>` on
stderr and exit 2 (argparse's own code for a usage error), whichever program parsed the options.
"""

from __future__ import annotations

import sys

USAGE_EXIT = 2


def usage_error(message: str) -> int:
    """Print `error: message` to stderr and return the usage exit code."""
    print(f"error: {message}", file=sys.stderr)
    return USAGE_EXIT
