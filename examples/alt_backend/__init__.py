"""A second, independent backend for the four Dr. OFF look-ups (odb.get, schedule.get,
adp.get, source.passages), written from the official data files and the published schemas
only, with seeded defects (``ALT_BACKEND_DEFECTS``) to test that the harness judges facts.

Run: ``python -m examples.alt_backend`` (stdio MCP server).
"""
