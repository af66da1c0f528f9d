"""The run side: scenarios and conformance runs against a target -> run logs and reports."""
