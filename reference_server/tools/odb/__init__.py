"""odb.get: the tool (get), its merge step and answer parts (merge), the formulary's wording
(wording), its scoring helpers (score) and what a drug question asks (intents)."""
