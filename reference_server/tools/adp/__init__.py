"""adp.get: the tool (get), its merge step (merge) and how clinicians word ADP questions
(language)."""
