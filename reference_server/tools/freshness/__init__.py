"""opa.freshness_probe: the tool (probe) and its steps."""
