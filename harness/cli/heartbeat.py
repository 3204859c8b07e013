"""A line in a log while a cell is silent, so no phase of a run says nothing for long.

Bars show every phase on a terminal, but where stderr is a log (Slurm, ``nohup``,
``| cat``) a phase writes a progress line only once it has counted some work, and some
work counts nothing: loading a model took 90 s of the quickstart's first cell on 2 cores
at load 20, imports included (issue 45: a first cell silent for 84 s). While a cell runs,
:class:`Heartbeat` writes ``still on CELL, N s in`` once ``interval`` seconds
(``$POSHARNESS_PROGRESS_SECONDS``, default 30) pass without any other line.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from posharness.base.progress_lines import duration


class Heartbeat:
    """Call :meth:`cell` when a cell starts, :meth:`heard` whenever a line is written,
    :meth:`idle` when the cell ends and :meth:`close` at the end of the run."""

    def __init__(
        self,
        write: Callable[[str], None],
        interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.write, self.interval, self.clock = write, interval, clock
        self.label: str | None = None
        self.started = self.last = clock()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def cell(self, label: str) -> None:
        with self._lock:
            self.label, self.started = label, self.clock()
            self.last = self.started
        if self._thread is None and self.interval > 0:
            self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
            self._thread.start()

    def heard(self) -> None:
        with self._lock:
            self.last = self.clock()

    def idle(self) -> None:
        with self._lock:
            self.label = None

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)

    def check(self) -> None:
        """Write the line if the cell has been silent for ``interval`` seconds."""
        with self._lock:
            now = self.clock()
            if self.label is None or now - self.last < self.interval:
                return
            self.last = now
            line = f"still on {self.label}, {duration(now - self.started)} in"
        self.write(line)

    def _run(self) -> None:
        while not self._stop.wait(min(1.0, self.interval / 4)):
            self.check()
