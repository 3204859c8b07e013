"""Progress as lines for ``posharness pretrain``, for logs that are not a terminal.

rich draws the bar only on a terminal; under Slurm, ``nohup`` or ``| cat`` the log held
nothing but ``run folder: …`` for as long as the run took (issue 40: 20 minutes of
silence). The writer is the core's (``posharness.base.progress_lines``), shared with
``run`` and studies, so every command's lines read alike: step, loss, seconds per step
and the time left, every ``$POSHARNESS_PROGRESS_SECONDS`` (default 30).
"""

from __future__ import annotations

from posharness.base.progress_lines import (  # noqa: F401  (this module's names, as before)
    DEFAULT_INTERVAL,
    ENVIRONMENT,
    ProgressLines,
    duration,
    interval_from_environment,
)
