"""Figures the report draws, cached by content so an unchanged figure is never redrawn.

A request names a figure kind and the data it is drawn from; its key is the hash of both,
the renderer's version and matplotlib's, and it is also the figure's file name, so a page
can link a figure before it is drawn and two reports of the same data share one drawing.
Rendered SVGs live in the user's cache folder (``$POSHARNESS_CACHE`` or the platform's,
under ``report-figures/``), not in the report: the report folder is replaced whole on
every build, and a cache there would be thrown away with it; the user cache also serves a
second report folder of the same boards and keeps the repository clean. A report over a
thousand cells then costs reading and templating, not matplotlib.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from posharness.base.errors import OutputError
from posharness.storage.hashing import hash_obj
from posharness.storage.io import atomic_write_text

RENDERER_VERSION = 2  # bump when a drawing changes, so cached figures are redrawn
FOLDER = "report-figures"


@dataclass(frozen=True)
class FigureRequest:
    kind: str  # a renderer in posharness.report.figures.RENDERERS
    data: Any  # JSON-able: everything the drawing depends on, nothing else

    @property
    def key(self) -> str:
        return hash_obj(
            {"renderer": RENDERER_VERSION, "matplotlib": _matplotlib(), "kind": self.kind}
            | {"data": self.data}
        )

    @property
    def href(self) -> str:
        return f"figures/{self.kind}-{self.key[:16]}.svg"


@cache
def _matplotlib() -> str:
    try:
        return version("matplotlib")
    except PackageNotFoundError:  # pragma: no cover - a dependency
        return "unknown"


@dataclass
class FigureStore:
    """Get-or-draw for figure requests; ``root=None`` draws every figure (``--no-cache``)."""

    root: Path | None
    drawn: int = 0
    reused: int = 0
    seconds_drawing: float = field(default=0.0)

    def svg(self, request: FigureRequest) -> str:
        key = request.key
        path = self.root / FOLDER / key[:2] / f"{key}.svg" if self.root else None
        if path is not None and path.is_file():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = path.read_text(encoding="utf-8")
                if text.rstrip().endswith("</svg>"):  # a complete drawing, not a torn one
                    self.reused += 1
                    return text
        import time

        from posharness.report.figures import draw

        start = time.perf_counter()
        text = draw(request.kind, request.data)
        self.seconds_drawing += time.perf_counter() - start
        self.drawn += 1
        if path is not None:
            # The cache only saves time: a folder that cannot be written costs a redraw.
            with contextlib.suppress(OutputError, OSError):
                atomic_write_text(path, text)
        return text
