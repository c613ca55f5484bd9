"""The agent runtime: one governed step at a time (assemble → govern → fit → call → record)."""
