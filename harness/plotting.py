"""matplotlib for every family: headless, imported only when a figure is drawn, and
figures written atomically (a temporary name renamed into place), never half a PNG."""

from __future__ import annotations

import os
from pathlib import Path


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path, **savefig) -> Path:
    """Write the figure under a temporary name and rename it; close it either way."""
    plt = pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", **savefig)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if tmp.exists():
            tmp.unlink()
    return path
