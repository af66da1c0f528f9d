"""Case family modules, one per corpus domain; importing this package registers them all."""

from evals.derive.families import adp, coverage, odb, ohip  # noqa: F401
