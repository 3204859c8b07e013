"""The package version, in the bottom layer so that any layer can record it."""

__version__ = "0.1.0"
