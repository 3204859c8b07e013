"""``compare``'s results as records, and as Markdown, CSV or JSON for papers and scripts.

One record per (row pair, metric) holds every field the terminal table shows and more
(the test's full-precision numbers, the declared metric type, the note), so a script
reading ``--format json`` never has to parse a rendered table.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from posharness.boards.compare import MetricComparison, RowComparison, family_size
from posharness.run.flags import FLAG_MARK
from posharness.stats.paired_tests import ALPHA, PairedTest, format_delta, format_p

FIELDS = (
    "a_model",
    "a_mode",
    "b_model",
    "b_mode",
    "limit",
    "task",
    "metric",
    "metric_type",
    "a",
    "b",
    "delta",
    "ci_low",
    "ci_high",
    "test",
    "tested_on",
    "n",
    "p",
    "p_holm",
    "p_method",
    "resamples",
    "patterns",
    "p_at_floor",
    "effect_size_dz",
    "significant",
    "verdict",
    "flags",
    "note",
)

# The record's fields read off the paired test (field -> PairedTest attribute), in FIELDS'
# order; None where the row has no test.
TEST_FIELDS = {
    "ci_low": "ci_low",
    "ci_high": "ci_high",
    "test": "name",
    "tested_on": "on",
    "n": "n",
    "p": "p_value",
    "p_holm": "p_adjusted",
    "p_method": "p_method",
    "resamples": "resamples",
    "patterns": "patterns",
    "p_at_floor": "at_floor",
    "effect_size_dz": "effect_size",
}


def verdict(m: MetricComparison) -> str:
    """'p < 0.05' or 'n.s.' by the Holm-adjusted p; the tolerance verdict of an exact or
    rounding-level Δ (``stats.precision``); 'no test' where there is none."""
    if m.test is None:
        return m.exact or "no test"
    said = f"p < {ALPHA}" if m.test.significant(ALPHA) else "n.s."
    return f"{said} {FLAG_MARK} flagged" if m.flags else said


def records(comparisons: list[RowComparison], keys: set[str] | None = None) -> list[dict[str, Any]]:
    out = []
    for row in comparisons:
        for m in row.metrics:
            if keys is not None and m.key not in keys:
                continue
            task, metric = m.key.split("/", 1)
            test = m.test
            out.append(
                {
                    "a_model": row.a.model,
                    "a_mode": row.a.mode,
                    "b_model": row.b.model,
                    "b_mode": row.b.mode,
                    "limit": row.a.key.limit,
                    "task": task,
                    "metric": metric,
                    "metric_type": m.kind.label if m.kind else None,
                    "a": m.a,
                    "b": m.b,
                    "delta": m.delta,
                    **{
                        field: getattr(test, attribute) if test else None
                        for field, attribute in TEST_FIELDS.items()
                    },
                    "significant": test.significant(ALPHA) if test else None,
                    "verdict": verdict(m),
                    "flags": "; ".join(m.flags),
                    "note": m.note,
                }
            )
    return out


def as_json(comparisons: list[RowComparison], keys: set[str] | None = None) -> str:
    document = {
        "alpha": ALPHA,
        "adjustment": "holm",
        "family": "the tests printed",
        "family_size": family_size([m for row in comparisons for m in row.metrics]),
        "confidence": 0.95,
        "comparisons": records(comparisons, keys),
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def as_csv(comparisons: list[RowComparison], keys: set[str] | None = None) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records(comparisons, keys))
    return buffer.getvalue()


def test_text(test: PairedTest | None) -> str:
    """A row's test and how its p was found: exact (a distribution, or every sign pattern
    enumerated, counted) or Monte Carlo (its resamples are in the p column's floor and in
    ``resamples``)."""
    if test is None:
        return "–"
    if test.patterns is not None:
        return f"{test.name} (exact, {test.patterns:,} patterns)"
    return f"{test.name} ({test.p_method})"


def table_cells(m: MetricComparison) -> tuple[str, ...]:
    """The cells of one metric in the terminal and Markdown tables."""
    test = m.test
    ci = (
        f"[{format_delta(test.ci_low)}, {format_delta(test.ci_high)}]"
        if test and test.ci_low is not None
        else "–"
    )
    return (
        m.key,
        "–" if m.a is None else f"{m.a:.4f}",
        "–" if m.b is None else f"{m.b:.4f}",
        format_delta(m.delta),
        ci,
        test_text(test),
        format_p(test.p_value, test.resamples) if test else "–",
        format_p(test.p_adjusted if test else None),
        "–" if test is None or test.effect_size is None else f"{test.effect_size:+.2f}",
        str(test.n) if test else "–",
        verdict(m) if test or m.exact else m.note,
    )


HEADERS = (
    "task/metric", "A", "B", "B − A", "95% CI of Δ", "test", "p", "p (Holm)", "d_z", "n", "verdict",
)  # fmt: skip
LEFT = (0, 5, 10)  # the text columns; the others hold numbers


def as_markdown(comparisons: list[RowComparison], keys: set[str] | None = None) -> str:
    m = family_size([metric for row in comparisons for metric in row.metrics])
    lines = [
        "Δ = B − A, tested on the statistic shown; 95 % BCa bootstrap interval (not "
        f"adjusted); p (Holm): adjusted over the {m} tests below (the family); n.s. = "
        f"adjusted p ≥ {ALPHA}; d_z = mean paired difference / its standard deviation.",
        "",
    ]
    for row in comparisons:
        a, b = row.a, row.b
        limit = f", limit {a.key.limit}" if a.key.limit is not None else ""
        lines += [f"## A = {a.model} ({a.mode}{limit}) · B = {b.model} ({b.mode}{limit})", ""]
        rule = ["---" if i in LEFT else "---:" for i in range(len(HEADERS))]
        lines += ["| " + " | ".join(HEADERS) + " |", "| " + " | ".join(rule) + " |"]
        for m in row.metrics:
            if keys is None or m.key in keys:
                cells = (c.replace("|", "\\|") for c in table_cells(m))
                lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        flagged = [m for m in row.metrics if m.flags and (keys is None or m.key in keys)]
        for m in flagged:
            lines.append(f"{FLAG_MARK} {m.key}: {'; '.join(m.flags)} — not a finding on its own")
        if flagged:
            lines.append("")
    return "\n".join(lines)
