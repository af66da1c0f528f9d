"""`make sensitivity`: seeded defects applied one at a time in a scratch worktree, and which
verdict command catches each (defects.yaml; runner.py)."""
