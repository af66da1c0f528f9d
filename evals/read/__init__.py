"""The read side: run logs -> decisions and reports (never calls a backend)."""
