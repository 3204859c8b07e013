"""Every time the project quotes, in one table: what was timed, on which cores, at what load.

Issue 45 found the same things timed differently in different places: the quickstart
"about 25 s" in the README against 3 min 14 s measured by a newcomer, the ``cpu-hour``
recipe "about 6 min a model" in the README and "about 15 min" in docs/pretraining.md. A
time is only useful with the load it was measured at (on 2 shared cores the same work
took 2-3.5 times longer), so each entry here carries its own, and every place that
quotes a time renders it from here: the README and docs/ (a test checks that they quote
:meth:`Timing.quote` word for word, ``tests/unit/core/test_quoted_times.py``), the
advice a missing zoo checkpoint gives (``models/pretrain/estimates.py``), the recipes'
descriptions and ``posharness run``'s estimate of a whole run (``run/estimate.py``).

A new measurement replaces an entry here; the pages that quote it then fail their test
until they say the new figure. Data and their wording only (``progress_lines.duration``
rounds them as a log does), so every layer may read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from posharness.base.progress_lines import duration

# The machine every entry was measured on unless it says otherwise.
TWO_CORES = "2 CPU cores (Intel Xeon @ 2.50GHz)"


@dataclass(frozen=True)
class Timing:
    """One measured time: ``seconds`` (a single figure) or ``seconds``-``upto`` (the range
    of several measurements), with the load it was measured at and the date."""

    what: str  # what was timed, as a reader would run it
    seconds: float
    load: str  # the 1-minute load average of the 2 cores, or what else ran beside it
    date: str
    upto: float | None = None  # the slowest of several measurements
    per_step: str = ""  # seconds an optimizer step, where the work is steps
    machine: str = TWO_CORES

    def span(self) -> str:
        """``3 min`` or ``5–7 min``: the figure a page quotes."""
        low = duration(self.seconds)
        if self.upto is None or duration(self.upto) == low:
            return low
        high = duration(self.upto)
        unit = low.split()[1]
        if high.split()[1] == unit:
            return f"{low.split()[0]}–{high}"
        return f"{low}–{high}"

    def quote(self) -> str:
        """``about 3 min on 2 CPU cores at load 4–9``: the words every page uses."""
        step = f", {self.per_step}" if self.per_step else ""
        return f"about {self.span()} on 2 CPU cores {self.load}{step}"


# -- the quickstart -------------------------------------------------------------------------
# `posharness run --model minilm --mode both,contextual,positional --tasks
# locality_symmetry,toeplitz` on a fresh cache, wall time from the command to its last line:
# 2 min 46 s measured by this module's author (load 3.5 rising to 8.6: two pretrainings and
# several test runs beside it), 3 min 14 s by a newcomer on the same machine (issue 45).
QUICKSTART = Timing(
    "the quickstart run (MiniLM, 2 tasks x 3 modes, fresh cache)",
    166.0,
    "at load 4–9 (two pretrainings beside it)",
    "2026-12-07",
    upto=194.0,
)
# The same command on idle cores (load 0.7, nothing else running), fresh cache
# (POSHARNESS_CACHE in an empty folder), measured 2026-12-08 with /usr/bin/time: 40.9 s.
QUICKSTART_IDLE = Timing(
    "the quickstart run (MiniLM, 2 tasks x 3 modes, fresh cache)",
    40.9,
    "with nothing else running",
    "2026-12-08",
)

# -- pretraining ----------------------------------------------------------------------------
# `posharness pretrain --recipe cpu-hour --size narrow` (1,500 steps of 64 x 32 tokens):
# issue 41's study trained ten models at 305-411 s each alone on the cores
# (leaderboards/cpu-hour-study/README.md, 0.20-0.27 s a step), and two side by side at one
# thread each took 0.54 s a step, about 14 min a model.
CPU_HOUR_ALONE = Timing(
    "posharness pretrain --recipe cpu-hour --size narrow, one run",
    305.0,
    "with nothing else running",
    "2026-11-28",
    upto=411.0,
    per_step="0.20–0.27 s a step",
)
CPU_HOUR_SHARED = Timing(
    "posharness pretrain --recipe cpu-hour --size narrow, two runs side by side",
    810.0,
    "beside a second pretraining, one thread each",
    "2026-12-07",
    per_step="0.54 s a step",
)

# Seconds per optimizer step of the default pretraining (global batch 32, 128 tokens, fp32,
# eager, a 30,522-piece vocabulary) at each size, from `posharness pretrain --plan-only`'s
# warm-up: `--model tupe-r --corpus wikitext-2 --size SIZE --steps 2000 --plan-only`.
PRETRAIN_STEP_LOAD = "at load 6"
PRETRAIN_STEP_DATE = "2026-11-28"
PRETRAIN_SECONDS_PER_STEP: dict[str, float] = {"tiny": 8.18, "mini": 15.7, "base": 75.0}


def pretrain_steps(size: str, steps: int) -> Timing | None:
    """The stored time of ``steps`` default pretraining steps at ``size`` (None: not measured)."""
    per_step = PRETRAIN_SECONDS_PER_STEP.get(size)
    if per_step is None:
        return None
    return Timing(
        f"posharness pretrain --size {size} --steps {steps}",
        per_step * steps,
        PRETRAIN_STEP_LOAD,
        PRETRAIN_STEP_DATE,
        per_step=f"{per_step:g} s a step",
    )


# `posharness run --model minilm --tasks dep_heads --mode both,contextual,positional` on all
# of UD English EWT test (2,077 sentences), heads picked on EWT dev: the README's long command.
DEP_HEADS_EWT = Timing(
    "the README's dep_heads run (MiniLM, 3 modes, EWT test)",
    720.0,
    "beside other jobs (load not recorded)",
    "2026-11-26",
)

# `posharness build-probes senteval` with the README's sources (docs/tasks/README.md).
SENTEVAL_BUILD = Timing(
    "building the ten SentEval probing sets", 90.0, "when idle (load below 1)", "2026-11-20"
)
# `posharness run --model tupe-r --tasks glue,shuffle_sr` with neither data nor checkpoint:
# the plan that lists all twelve problems, before any model loads.
HEADLINE_PLAN = Timing(
    "planning the headline command with nothing present",
    1.5,
    "when idle (load below 1)",
    "2026-11-28",
)

# -- cells of a run: the model behind `posharness run`'s estimate (run/estimate.py) ---------
# Measured with MiniLM (22.7M parameters) on this machine; a smaller zoo model is faster,
# a base-sized one slower, idle cores faster. Sources: the quickstart above (6 geometry
# cells, 163 s of cell time: the first cell of a mode is the dearest, with the model load,
# the probe, the resampled intervals and the reference statistics), the README's dep_heads
# run (DEP_HEADS_EWT: 3 cells) and a quick-protocol RTE fine-tuning of MiniLM on 320
# training pairs for 3 epochs, scored on 200 dev pairs each epoch (452 s at load 12-20).
CELL_LOAD = "at load 4–20 (two pretrainings and test runs beside it)"
CELL_DATE = "2026-12-07"
# Fine-tuning: seconds per training example and epoch, and per example scored.
TRAIN_SECONDS_PER_EXAMPLE = 0.38  # 2.63 examples a second, batch 32, 128 pieces
EVAL_SECONDS_PER_EXAMPLE = 0.1  # the rest of its 452 s: 600 dev pairs and the model load
# The word-swap probes score both sentences of each pair; Shuffle-3..6, Random and SR
# hold 6,588 pairs on average when built from SNLI test (docs/tasks/README.md).
PROBE_PAIRS = 6588
# Whole cells of the kinds whose work planning does not count, at their usual size.
CELL_SECONDS: dict[str, float] = {
    "attention-geometry": 27.0,
    "attention-analysis": DEP_HEADS_EWT.seconds / 3,  # one mode on EWT test's 2,077 sentences
    "perturbation": 2 * PROBE_PAIRS * EVAL_SECONDS_PER_EXAMPLE,  # the classifier aside
}
# The examples CELL_SECONDS scored, so that --limit N scales a cell down.
CELL_EXAMPLES: dict[str, int] = {"attention-analysis": 2077, "perturbation": PROBE_PAIRS}

# -- the test tiers (markers in tests/conftest.py; docs/testing.md) ---------------------------
# One process each (`-n 0`); with other jobs on the cores they take 2-4 times longer.
TIERS: dict[str, Timing] = {
    "fast": Timing("the fast tier", 300.0, "when idle (load below 1)", "2026-11-28"),
    "integration": Timing("the integration tier", 900.0, "at load 4–6", "2026-11-28"),
    "slow": Timing("the slow tier", 720.0, "at load 4–6", "2026-11-28"),
    "browser": Timing("the browser tier", 30.0, "when idle (load below 1)", "2026-11-28"),
}
# `python -m pytest -n auto` (2,312 tests, one worker per core): CI's run on its own cores.
WHOLE_SUITE = Timing("the whole suite, -n auto", 46 * 60.0, "when idle (CI)", "2026-12-06")
