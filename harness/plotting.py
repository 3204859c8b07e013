"""matplotlib for every family: headless, imported only when a figure is drawn, and
figures written atomically (a temporary name renamed into place), never half a PNG."""

from __future__ import annotations

from pathlib import Path

from posharness.io import atomic_target


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path, **savefig) -> Path:
    """Write the figure under a temporary name and rename it; close it either way."""
    try:
        with atomic_target(path) as tmp:
            fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", **savefig)
    finally:
        pyplot().close(fig)
    return path
