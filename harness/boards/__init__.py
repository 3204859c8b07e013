"""Leaderboards built from result files: rows and their settings, views, the examples
bundle, portable boards and ``compare``."""
