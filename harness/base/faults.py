"""Named points where a test may kill the process, to prove that a run killed anywhere
resumes to the same numbers (tests/unit/core/test_kill_battery.py).

``POSHARNESS_KILL_AT=POINT:N`` sends SIGKILL to the process itself the N-th time it
passes ``POINT`` — the same hard stop as ``kill -9`` or a lost node, but at a chosen
moment instead of a wall-clock guess, so the battery is deterministic. Unset (always,
outside the battery) a point costs one dictionary lookup.

Points: ``encode-batch`` (after each encoded batch), ``train-step`` (after each
fine-tuning optimizer step), ``atomic-write`` (a file fully written under its temporary
name, not yet renamed: results, leaderboards, cache entries, figures, logs),
``probe-file`` (between the files of a probe build), ``senteval-file`` (between the files of
a SentEval probing build), ``pretrain-step``.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
from pathlib import Path

ENV_VAR = "POSHARNESS_KILL_AT"
COUNT_VAR = "POSHARNESS_COUNT_POINTS"  # a JSON file: how often each point was passed


class _Points:
    """Passes per point in this process, and the tally written at exit when asked."""

    def __init__(self) -> None:
        self.passes: dict[str, int] = {}
        self.tallying = False

    def passed(self, name: str) -> int:
        self.passes[name] = self.passes.get(name, 0) + 1
        if not self.tallying and os.environ.get(COUNT_VAR):
            self.tallying = True
            atexit.register(self._write_tally, Path(os.environ[COUNT_VAR]))
        return self.passes[name]

    def _write_tally(self, path: Path) -> None:
        path.write_text(json.dumps(self.passes))


_POINTS = _Points()


def _target() -> tuple[str, int] | None:
    spec = os.environ.get(ENV_VAR)
    if not spec:
        return None
    point, _, count = spec.partition(":")
    return point, int(count or 1)


def kill_point(name: str) -> None:
    """Die here, hard, if the environment asks for this point and count."""
    if not os.environ.get(ENV_VAR) and not os.environ.get(COUNT_VAR):
        return
    passes = _POINTS.passed(name)
    if _target() == (name, passes):
        os.kill(os.getpid(), signal.SIGKILL)
