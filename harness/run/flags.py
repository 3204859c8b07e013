"""Outcomes that look like findings but are not: flagged on the result, in the run's
output and in every leaderboard table.

An untrained classifier that always answers one class gives a word-swap Δ of +100 with
McNemar p = 1e-15; a score on eight examples has an interval wider than any effect; a
Toeplitz R² no better than its shuffled control says nothing about translation
invariance. Each check here is generic — it reads only what every result has (metrics,
per-example rows) — so a new task is covered without code of its own; a task may add
flags of its own through ``TaskResult.flags``.

What a count means: ``Metric.n`` is the number of *examples* behind a value — the units
whose number sets its uncertainty: arcs for dependency heads, sentence pairs for SNLI and
the word-swap probes, sentences for probing, probe words for the identical-word probe —
never the number of groups an average runs over (a macro over 20 relations rests on the
~23,000 arcs of those relations, not on 20 examples). An average over groups is as sound
as its thinnest group, which ``n`` cannot say; a task that averages groups reports them
through :func:`thin_group_flags`.

Figures mark flagged cells too (hatching and a ``FLAG_MARK``, artists tagged with
``FLAG_GID``), so a picture copied without its table still says "not a finding".
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from posharness.contracts.examples import Example
from posharness.contracts.results import Metric

MIN_EXAMPLES = 30  # below this, a mean's 95 % interval is wider than most effects
CONSTANT_SHARE = 0.98  # a classifier that gives one class this often is degenerate
MIN_FOR_CONSTANT = 10  # fewer predictions than this cannot show it
PREDICTION_KEYS = ("prediction", "original_prediction")
CONTROL_SUFFIX = "_shuffled"
# How figures mark a flagged cell: the sign the tables use (board_views' " !"), a hatch on
# bars, and a gid on every marking artist, so tests (and SVG readers) can find the marks.
FLAG_MARK = "!"
FLAG_HATCH = "///"
FLAG_COLOUR = "crimson"
FLAG_GID = "posharness-flagged"
FLAG_NOTE = "! flagged: not a finding (see the flags)"


def degenerate_flags(
    main_metric: str,
    metrics: Mapping[str, Metric],
    examples: Iterable[Example] | None,
) -> list[str]:
    """One line per reason to distrust this cell's numbers; empty when there is none."""
    flags = []
    main = metrics.get(main_metric)
    if main is not None and main.n is not None and main.n < MIN_EXAMPLES:
        flags.append(
            f"{main_metric} is computed on {main.n} examples (fewer than {MIN_EXAMPLES}): "
            "its interval is wide; for a number to report, evaluate more examples (a larger "
            "split, or no --limit)"
        )
    for name, metric in metrics.items():
        control = metrics.get(f"{name}{CONTROL_SUFFIX}")
        if control is not None and control.value >= metric.value:
            flags.append(
                f"{name} = {metric.value:.4g} is no higher than its shuffled control "
                f"({control.value:.4g}): no structure beyond chance"
            )
    if examples is not None:
        flags.extend(_constant_predictions(examples))
    return flags


def thin_group_flags(
    averages: str, groups: Mapping[str, int], unit: str = "examples", kind: str = "groups"
) -> list[str]:
    """A flag when averages over groups (macros over relations) rest on groups scored on
    fewer than ``MIN_EXAMPLES`` examples each: a best-of-many score on a handful of
    examples is optimistic noise, and the average gives it a full group's weight.

    ``averages`` names the averages (a plural subject, e.g. "the macro averages");
    ``groups`` maps every group they average to its examples."""
    thin = sorted(((count, name) for name, count in groups.items() if count < MIN_EXAMPLES))
    if not thin:
        return []
    shown = ", ".join(f"{name} {count}" for count, name in thin[:6])
    more = f", and {len(thin) - 6} more" if len(thin) > 6 else ""
    return [
        f"{averages} rest on {kind} scored on fewer than {MIN_EXAMPLES} {unit}: {len(thin)} "
        f"of {len(groups)} ({shown}{more}); their scores are noise: for a number to report, "
        "evaluate more examples (a larger split, or no --limit)"
    ]


def flagged_label(label: str, flagged: bool) -> str:
    """A legend or tick label with the tables' flag sign when its cell is flagged."""
    return f"{label} {FLAG_MARK}" if flagged else label


def note_flagged(fig: Any, count: int) -> float:
    """A line at the foot of a figure that has flagged cells, saying what the marks mean.

    Returns the figure fraction the line takes (0 when nothing is flagged and nothing was
    added), for ``fig.tight_layout(rect=(0, margin, 1, 1))`` to keep the axes clear of it.
    """
    if not count:
        return 0.0
    fig.text(
        0.01,
        0.01,
        f"{FLAG_NOTE}; {count} flagged cell{'s' if count > 1 else ''} marked",
        fontsize=7,
        color=FLAG_COLOUR,
        ha="left",
        va="bottom",
        gid=FLAG_GID,
    )
    return min(0.2, 0.22 / fig.get_figheight())


def flag_marks(fig: Any) -> list[Any]:
    """Every artist of a figure that marks a flagged cell: its gid is ``FLAG_GID``, or
    starts with it (SVG figures number theirs, as element ids must be unique)."""
    return fig.findobj(lambda artist: str(artist.get_gid() or "").startswith(FLAG_GID))


def _constant_predictions(examples: Iterable[Example]) -> list[str]:
    """A classifier that answers (nearly) one class on a split or a probe side. The class is
    quoted as text whatever its type, so a label id (RTE's ``'1'``) and a label name
    (SNLI's ``'neutral'``) read alike."""
    counts: dict[tuple[str, str], Counter[Any]] = defaultdict(Counter)
    for example in examples:
        for key in PREDICTION_KEYS:
            if example.has(key):
                counts[(example.split or "", key)][example.value(key)] += 1
    flags = []
    for (split, key), counter in sorted(counts.items()):
        total = sum(counter.values())
        value, top = counter.most_common(1)[0]
        if total >= MIN_FOR_CONSTANT and top / total >= CONSTANT_SHARE:
            where = f" on {split}" if split else ""
            flags.append(
                f"degenerate classifier: {key} is {str(value)!r} for {100 * top / total:.0f} % of "
                f"{total} examples{where}; its deltas and tests mean nothing — train longer "
                "or on more data"
            )
    return flags


def flag_section(results: Iterable[Any]) -> list[str]:
    """Markdown lines for a summary across cells: every flag of every cell, or nothing."""
    lines = [f"- **{r.task.name} · {r.mode.name}**: {flag}" for r in results for flag in r.flags]
    return ["", "## Flags (do not read these numbers as findings)", "", *lines] if lines else []


def limit_lines(results: Iterable[Any]) -> list[str]:
    """Markdown lines that say a summary's cells were computed on limited data, or none."""
    limits = sorted(
        {(r.limit, r.train_limit) for r in results if r.limit or r.train_limit},
        key=lambda pair: (pair[0] or 0, pair[1] or 0),
    )
    parts = [
        " and ".join(
            text
            for text in (
                f"at most {limit} evaluation examples (--limit)" if limit else "",
                f"at most {train} training examples (--train-limit)" if train else "",
            )
            if text
        )
        for limit, train in limits
    ]
    return (
        [f"**Limited run:** computed on {'; '.join(parts)}: not a number to report.", ""]
        if parts
        else []
    )
