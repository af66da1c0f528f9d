"""A second, independent backend for `opa.search_sections`, `opa.get_section` and
`opa.freshness_probe`, and for `opa.policy_check` (CPSO policies and their advice,
:mod:`examples.alt_opa.policy`, with the spec's fields only) and `opa.clinical_tools` (the CEP
tools with their features and sections, :mod:`examples.alt_opa.cep_catalogue`, spec fields only)
and `opa.ipac_guidance` (PHO infection prevention and control guidance, with conflicts against
CPSO's IPAC pages, :mod:`examples.alt_opa.ipac`, spec fields only).

It reads the publishers' extracts (``../shared/data/opa`` or ``ALT_OPA_DATA``) at start-up,
cuts each document into sections by its own heading rules (:mod:`examples.alt_opa.corpus`),
ranks them with a small BM25 (:mod:`examples.alt_opa.search`), ages them by the spec's
staleness rules (:mod:`examples.alt_opa.freshness`) and serves the six tools over stdio
(:mod:`examples.alt_opa.server`): the first two with the reference server's published schemas,
the freshness probe with the spec's fields only.
Its document and section ids (``doc0007``, ``doc0007-sec03``) are its own; what it shares with
any other backend is the public facts: official URL, organisation, title, heading, text.

Run: ``python -m examples.alt_opa``. Seeded defects for harness tests: ``ALT_OPA_DEFECTS`` =
comma-separated ``wrong_document``, ``no_url``, ``slow``.
"""
