"""What tests, the harness (`evals`), `load` and `scale` share, kept in one neutral place.

This package imports none of them (an import-linter contract in pyproject.toml says so), so
`load` and `evals` can both build on it without importing each other: the MCP-over-HTTP wire
and its clients, the server launcher, the percentile definition, the bootstrap, durations, the
golden scenario files and the SLO file.
"""
