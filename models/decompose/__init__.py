"""Contextual-only and positional-only attention for Hugging Face encoder families."""
