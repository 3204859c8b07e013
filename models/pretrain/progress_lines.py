"""Progress as lines, for logs that are not a terminal.

rich draws ``posharness pretrain``'s bar only on a terminal; under Slurm, ``nohup`` or
``| cat`` the log held nothing but ``run folder: …`` for as long as the run took (issue 40:
20 minutes of silence). So where stderr is no terminal a line is written at most every
``interval`` seconds (``$POSHARNESS_PROGRESS_SECONDS``, default 60) with the step, the
loss, the measured seconds per step and the time left at that rate.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

DEFAULT_INTERVAL = 60.0
ENVIRONMENT = "POSHARNESS_PROGRESS_SECONDS"


def interval_from_environment() -> float:
    """Seconds between lines: ``$POSHARNESS_PROGRESS_SECONDS`` when it is a number >= 0."""
    text = os.environ.get(ENVIRONMENT, "")
    try:
        value = float(text)
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


class ProgressLines:
    """Writes ``NAME: step S/T, loss L, R s/step, about D left`` every ``interval`` seconds.

    The rate is measured from the first step reported in this process, so a resumed run's
    earlier steps do not make it look faster; the last step is always reported.
    """

    def __init__(
        self,
        name: str,
        total: int,
        write: Callable[[str], None],
        interval: float = DEFAULT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name, self.total, self.write = name, total, write
        self.interval, self.clock = interval, clock
        self.started: tuple[float, int] | None = None
        self.last_written: float | None = None

    def update(self, step: int, loss: float) -> None:
        now = self.clock()
        if self.started is None:
            self.started = (now, step)
        due = self.last_written is None or now - self.last_written >= self.interval
        if not (due or step >= self.total):
            return
        self.last_written = now
        self.write(self.line(step, loss, now))

    def line(self, step: int, loss: float, now: float) -> str:
        head = f"{self.name}: step {step}/{self.total}, loss {loss:.3f}"
        start_time, start_step = self.started or (now, step)
        done = step - start_step
        if done <= 0 or now <= start_time:
            return f"{head}, measuring the rate"
        per_step = (now - start_time) / done
        left = max(0, self.total - step) * per_step
        return f"{head}, {per_step:.2f} s/step, about {duration(left)} left"
