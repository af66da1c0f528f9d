"""Security checks for any MCP backend (``ocm security --target SPEC``).

One module per check family (poisoning, rug pull, reach, secrets, paths, unbounded work,
results, effects, HTTP transport); every family calls tools through :mod:`.probe` (schema-valid
arguments, a refused call retried, each call marked as having reached its tool or not); each
family registers its checks by name in :mod:`.registry`, and every finding
states its grade (a MUST/SHOULD of the MCP specification with its reference, or a security
finding or warning of this harness) and a one-line reproduction. :mod:`.runner` connects,
decides which tools may be called (:mod:`.safety`), runs the families and writes
``security.json`` and ``security.md`` (:mod:`.report`).
"""
