"""Progress as lines, for logs that are not a terminal: the rate and the time left.

rich draws its bars only on a terminal; under Slurm, ``nohup``, a study's stage log or
``| cat`` a long fine-tuning or stage said nothing for as long as it ran (issue 40). Where
the output is no terminal, :class:`ProgressLines` writes a line at most every
``interval`` seconds (``$POSHARNESS_PROGRESS_SECONDS``, default 30) with the count done,
the measured seconds per unit and the time left at that rate, and always the last one.

The core's copy of ``posharness.models.pretrain.progress_lines`` (which the core may not
import), generalised to any unit (``step``, ``epoch``, ``stage``) and an optional loss,
so pretraining, fine-tuning and study stages write the same lines.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

DEFAULT_INTERVAL = 30.0  # nothing a quickstart runs is silent longer (issue 45)
ENVIRONMENT = "POSHARNESS_PROGRESS_SECONDS"


def interval_from_environment() -> float:
    """Seconds between lines: ``$POSHARNESS_PROGRESS_SECONDS`` when it is a number >= 0."""
    try:
        value = float(os.environ.get(ENVIRONMENT, ""))
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value >= 0 else DEFAULT_INTERVAL


def duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.4 h``: the precision a reader of a log needs."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def is_terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (stderr by default) is a terminal, where bars are drawn instead."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or unusual stream: not a terminal
        return False


class ProgressLines:
    """Writes ``NAME: UNIT S/T[, loss L], R s/UNIT, about D left`` every ``interval``
    seconds (``NAME: S/T, R s each, …`` when ``unit`` is empty: a count of anything).

    The rate is measured from the first count reported in this process (``start``, or
    the first ``update``), so work done before a resume does not make it look faster.
    """

    def __init__(
        self,
        name: str,
        total: int,
        write: Callable[[str], None],
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "step",
    ) -> None:
        self.name, self.total, self.write, self.unit = name, total, write, unit
        self.interval = interval_from_environment() if interval is None else interval
        self.clock = clock
        self.started: tuple[float, int] | None = None
        self.last_written: float | None = None

    def start(self, done: int = 0) -> None:
        """Start the clock at ``done`` (work finished before this process)."""
        self.started = (self.clock(), done)

    def update(self, done: int, loss: float | None = None) -> None:
        now = self.clock()
        if self.started is None:
            self.started = (now, done)
        due = self.last_written is None or now - self.last_written >= self.interval
        if not (due or done >= self.total):
            return
        self.last_written = now
        self.write(self.line(done, now, loss))

    def line(self, done: int, now: float, loss: float | None = None) -> str:
        unit = f"{self.unit} " if self.unit else ""
        head = f"{self.name}: {unit}{done}/{self.total}"
        if loss is not None:
            head += f", loss {loss:.3f}"
        start_time, start_done = self.started or (now, done)
        counted = done - start_done
        if counted <= 0 or now <= start_time:
            return f"{head}, measuring the rate"
        per_unit = (now - start_time) / counted
        left = max(0, self.total - done) * per_unit
        rate = f"s/{self.unit}" if self.unit else "s each"
        return f"{head}, {_seconds(per_unit)} {rate}, about {duration(left)} left"


def _seconds(value: float) -> str:
    """A rate with the digits that matter: 0.0031, 0.42, 12.5."""
    return f"{value:.2g}" if value < 0.1 else f"{value:.2f}" if value < 10 else f"{value:.1f}"


def counter(
    name: str, total: int, write: Callable[[str], None], interval: float | None = None
) -> Callable[[int], None]:
    """An ``advance(n)`` for a reporter's ``progress(label, total)`` (no unit): its first
    line once ``interval`` seconds have passed, then one per interval, and the last one
    only when an earlier one was written, so work shorter than the interval says nothing.
    """
    lines = ProgressLines(name, total, write, interval, unit="")
    lines.start()
    done, wrote = [0], [False]

    def advance(n: int) -> None:
        done[0] += n
        now = lines.clock()
        last = lines.last_written if lines.last_written is not None else lines.started[0]
        finished = done[0] >= total
        if now - last >= lines.interval or (finished and wrote[0]):
            lines.last_written, wrote[0] = now, True
            write(lines.line(done[0], now))

    return advance
