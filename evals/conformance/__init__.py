"""The conformance core fuzz and security share: the grading table, the call classifier, the
canary (the finding, its grades and the event stream are in ocm_common.findings)."""
