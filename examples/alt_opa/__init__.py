"""A second, independent backend for `opa.search_sections` and `opa.get_section`.

It reads the publishers' extracts (``../shared/data/opa`` or ``ALT_OPA_DATA``) at start-up,
cuts each document into sections by its own heading rules (:mod:`examples.alt_opa.corpus`),
ranks them with a small BM25 (:mod:`examples.alt_opa.search`) and serves the two tools over
stdio with the reference server's published schemas (:mod:`examples.alt_opa.server`).
Its document and section ids (``doc0007``, ``doc0007-sec03``) are its own; what it shares with
any other backend is the public facts: official URL, organisation, title, heading, text.

Run: ``python -m examples.alt_opa``. Seeded defects for harness tests: ``ALT_OPA_DEFECTS`` =
comma-separated ``wrong_document``, ``no_url``, ``slow``.
"""
