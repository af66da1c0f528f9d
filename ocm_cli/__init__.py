"""`ocm`: the project's one command-line program (ocm_cli/program.py)."""
