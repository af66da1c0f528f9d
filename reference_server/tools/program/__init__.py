"""opa.program_lookup: the tool (lookup) and its program facts (facts)."""
