"""Load testing for the MCP tool servers: locust over streamable HTTP, SLOs, `make bench`."""
