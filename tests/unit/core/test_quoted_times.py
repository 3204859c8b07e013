"""Every time the README and docs quote comes from one table, ``posharness.base.timings``,
and says its load (issue 45, part 2): each page quotes :meth:`Timing.quote` word for word,
the pages written for that issue hold no other time, the recipes and the no-checkpoint
advice render the same entries, and the advice leads with the recipe that learns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from posharness.base import timings
from posharness.base.progress_lines import DEFAULT_INTERVAL

REPO = Path(__file__).resolve().parents[3]
# A time as prose writes it: "3 min", "0.20–0.27 s", "8.7 h", "about 14 min".
TIME = re.compile(r"\d+(?:[.,]\d+)?(?:–\d+(?:[.,]\d+)?)?\s?(?:s|min|h|hours?|minutes?)\b")
MINI_2000 = timings.pretrain_steps("mini", 2000)
TINY_100 = timings.pretrain_steps("tiny", 100)

# Each page and the entries it must quote as the table words them.
QUOTED = {
    "README.md": [
        timings.QUICKSTART,
        timings.QUICKSTART_IDLE,
        timings.DEP_HEADS_EWT,
        timings.CPU_HOUR_ALONE,
        timings.CPU_HOUR_SHARED,
        MINI_2000,
    ],
    "docs/pretraining.md": [
        timings.CPU_HOUR_ALONE,
        timings.CPU_HOUR_SHARED,
        MINI_2000,
        TINY_100,
    ],
    "docs/testing.md": [*timings.TIERS.values(), timings.WHOLE_SUITE],
    "docs/running.md": [timings.HEADLINE_PLAN],
    "docs/tasks/README.md": [timings.SENTEVAL_BUILD],
}
# Pages that quote no time of their own: every time on them is one of the table's.
ONLY_TABLE_TIMES = [
    "README.md",
    "docs/README.md",
    "docs/testing.md",
    "docs/running.md",
    "docs/models.md",
    "docs/tasks/README.md",
    "docs/python_api.md",
    "docs/layout.md",
]


def _text(page: str) -> str:
    """The page with its lines joined: a quote may wrap."""
    return " ".join((REPO / page).read_text(encoding="utf-8").split())


@pytest.mark.parametrize("page", sorted(QUOTED))
def test_each_page_quotes_the_table_word_for_word(page: str) -> None:
    text = _text(page)
    for timing in QUOTED[page]:
        assert timing is not None and timing.quote() in text, (page, timing.quote())


@pytest.mark.parametrize("page", ONLY_TABLE_TIMES)
def test_a_page_holds_no_time_but_the_tables(page: str) -> None:
    every = [
        *(t for ts in QUOTED.values() for t in ts if t is not None),
        timings.TIERS["fast"],
    ]
    text = _text(page)
    for quote in {t.quote() for t in every}:
        text = text.replace(quote, "")
    text = text.replace(f"every {DEFAULT_INTERVAL:.0f} s", "")  # a setting, not a time
    for rate, what in (
        (timings.TRAIN_SECONDS_PER_EXAMPLE, "per training example"),
        (timings.EVAL_SECONDS_PER_EXAMPLE, "per example scored"),
    ):  # the run estimate's rates, as docs/running.md states them
        text = text.replace(f"{rate:g} s {what}", "")
    assert TIME.findall(text) == [], page


def test_every_quote_says_its_load_and_cores() -> None:
    entries = [
        timings.QUICKSTART,
        timings.QUICKSTART_IDLE,
        timings.DEP_HEADS_EWT,
        timings.CPU_HOUR_ALONE,
        timings.CPU_HOUR_SHARED,
        timings.SENTEVAL_BUILD,
        timings.HEADLINE_PLAN,
        timings.WHOLE_SUITE,
        *timings.TIERS.values(),
        MINI_2000,
    ]
    for entry in entries:
        assert entry is not None
        quote = entry.quote()
        assert quote.startswith("about ") and "on 2 CPU cores" in quote
        assert re.search(r"load|nothing else|beside|idle", quote), quote


def test_the_old_contradicting_times_are_gone() -> None:
    readme, pretraining = _text("README.md"), _text("docs/pretraining.md")
    assert "about 6 min a model" not in readme and "25 s" not in readme
    assert "about 15 min a model" not in pretraining


def test_the_recipe_and_the_advice_render_the_same_entries(tmp_path: Path) -> None:
    from posharness.models.pretrain.estimates import missing_checkpoint_advice
    from posharness.models.pretrain.recipes import RECIPES

    assert timings.CPU_HOUR_ALONE.quote() in RECIPES["cpu-hour"].description
    advice = missing_checkpoint_advice("tupe-r", tmp_path, 2000)
    learning = advice.index("--recipe cpu-hour --size narrow")
    smoke = advice.index("--size tiny --steps 100")
    assert learning < advice.index(timings.CPU_HOUR_ALONE.quote()) < smoke
    assert TINY_100 is not None and TINY_100.quote() in advice
    assert MINI_2000 is not None and MINI_2000.quote() in advice
    # The times are recorded, not measured here, and the advice says so.
    assert "recorded elsewhere" in advice and "--plan-only" in advice
    assert "\n" not in advice


def test_the_quoted_spans_read_as_a_person_would_write_them() -> None:
    assert timings.CPU_HOUR_ALONE.span() == "5–7 min"
    assert timings.QUICKSTART.span() == "3 min"  # 166-194 s: both about 3 min
    assert timings.Timing("x", 50.0, "idle", "d", upto=120.0).span() == "50 s–2 min"


def test_the_run_estimate_page_states_the_rates_the_code_uses() -> None:
    text = _text("docs/running.md")
    assert f"{timings.TRAIN_SECONDS_PER_EXAMPLE:g} s per training example" in text
    assert f"{timings.EVAL_SECONDS_PER_EXAMPLE:g} s per example scored" in text
    assert timings.CELL_LOAD in text
