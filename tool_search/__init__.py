"""Tool search: an MCP server that finds tools in catalogues gathered from anywhere.

Catalogues come from live MCP servers (stdio, HTTP, the reference server in process) and from
tool-definition files (MCP `tools/list`, Anthropic `tools`, OpenAI functions). Hosts that search
for tools instead of loading every definition find a backend's tools only through their names
and descriptions; this package ranks them (BM25 + the local embedding model, fused by RRF) and
`evals routing` measures how often the right tool comes first.
"""
