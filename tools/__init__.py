"""The tool registry, the one tool gate, and the built-in tools."""
