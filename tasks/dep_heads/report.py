"""From head counts to Chen et al.'s Table A3: per-relation scores, averages, and the
table across attention modes.

Relations are ranked by frequency and the table keeps the ``top`` most frequent (Chen et
al. show twenty), because a best-of-144-heads score on a handful of arcs is noise. Short
and long relations are split on mean distance (≤ 4 words is short, as in the paper), and
each group is averaged over relations (a macro average), like the paper's summary rows.

Two choices of Clark et al.'s Table 1 differ from Chen et al.'s and are offered beside
ours: their relation set leaves out ``punct`` (``macro_no_punct`` over the ``top`` most
frequent relations without it), and their "All" row counts every word, root words
included — a head never predicts the root, so those are always wrong (``all_words``;
``all_arcs`` pools the non-root arcs only).

Chen et al.'s Table A3 has one more row, Root at distance 0.0 (contextual 99.3, positional
3.8, both 86.5; arXiv v2 App. A.6.2, draft Table 8), and its short and macro averages
include it (recomputed from its rows: 28.4 / 54.3 / 61.6 short and 27.5 / 46.0 / 55.4
macro with Root, 23.7 / 48.2 / 53.8 macro without). With ``score_root`` the root relation
is scored apart (a head is right when the root word's argmax is the word itself) and
averaged in ``macro_with_root``, ``macro_short_with_root`` and ``macro_long_with_root``
over the paper's relation set: the ``top`` most frequent relations with root ranked among
them. The averages above never include it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from posharness.contracts.task import Metric
from posharness.run.flags import flag_section, limit_lines, thin_group_flags
from posharness.tasks.dep_heads.scoring import HeadCounts, RelationScore, score_relations

PUNCT = "punct"  # left out of Clark et al.'s Table 1


@dataclass(frozen=True)
class RelationReport:
    table: list[RelationScore]  # the rows of the headline table, most frequent first
    table_set: str  # which label set the table uses: "collapsed" or "full"
    pooled: RelationScore  # every non-root arc as one relation, one best head for all
    every: dict[str, list[RelationScore]]  # every relation, per label set
    short_distance: float
    root_words: int  # words whose head is the root: in Clark et al.'s "All" row, never right
    no_punct: list[RelationScore]  # Clark et al.'s Table 1 set: the table without punct
    root: RelationScore | None = None  # root words onto themselves; None unless scored
    # Chen et al.'s Table A3 set: the ``top`` most frequent relations, root ranked among them
    with_root: list[RelationScore] = field(default_factory=list)

    def _group(
        self, short: bool | None, relations: list[RelationScore] | None = None
    ) -> list[RelationScore]:
        rows = self.table if relations is None else relations
        if short is None:
            return rows
        return [r for r in rows if (r.mean_distance <= self.short_distance) == short]

    def metrics(self) -> dict[str, Metric]:
        """Each macro average's ``n`` is the arcs behind it (summed over its relations),
        not the number of relations: the examples are arcs (see ``posharness.run.flags``)."""
        metrics: dict[str, Metric] = {}
        for suffix, short in (("", None), ("_short", True), ("_long", False)):
            group = self._group(short)
            if group:
                metrics[f"macro{suffix}"] = _macro([r.best.accuracy for r in group], group)
        if self.no_punct:
            metrics["macro_no_punct"] = _macro(
                [r.best.accuracy for r in self.no_punct], self.no_punct
            )
        held = [r for r in self.table if r.held_out is not None]
        if held:
            scores = [score for r in held if (score := r.held_out) is not None]
            metrics["macro_held_out"] = _macro(scores, held)
        metrics["baseline_macro"] = _macro([r.baseline for r in self.table], self.table)
        metrics["all_arcs"] = _share(self.pooled.best.accuracy, self.pooled.arcs)
        if self.pooled.held_out is not None:
            metrics["all_arcs_held_out"] = _share(self.pooled.held_out, self.pooled.arcs)
        metrics["baseline_all_arcs"] = _share(self.pooled.baseline, self.pooled.arcs)
        words = self.pooled.arcs + self.root_words
        metrics["all_words"] = _share(self.pooled.best.accuracy * self.pooled.arcs / words, words)
        for relation in self.table:
            metrics[f"acc_{relation.relation}"] = _share(relation.best.accuracy, relation.arcs)
        if self.root is not None:  # new names only: every metric above is left as it was
            metrics[f"acc_{self.root.relation}"] = _share(self.root.best.accuracy, self.root.arcs)
            for suffix, short in (("", None), ("_short", True), ("_long", False)):
                group = self._group(short, self.with_root)
                if group:
                    metrics[f"macro{suffix}_with_root"] = _macro(
                        [r.best.accuracy for r in group], group
                    )
        return metrics

    def flags(self) -> list[str]:
        """The macro averages give every relation one vote: a relation scored on a handful
        of arcs (its best of 2 × layers × heads predictors is near 100 % by selection
        alone) is flagged, though the arcs behind the macro are many."""
        relations = {r.relation: r.arcs for r in (*self.table, *self.no_punct, *self.with_root)}
        return thin_group_flags("the macro averages", relations, unit="arcs", kind="relations")

    def details(self) -> dict[str, Any]:
        details = {
            "table_set": self.table_set,
            "table_relations": [r.relation for r in self.table],
            "no_punct_relations": [r.relation for r in self.no_punct],
            "short_distance": self.short_distance,
            "root_words": self.root_words,
            "pooled": asdict(self.pooled),
            "relations": {name: [asdict(r) for r in rows] for name, rows in self.every.items()},
            "accuracy": "fraction of the relation's scored arcs whose head is the word the "
            "dependent attends to most (dependent_to_head) or the word that attends most to "
            "the dependent (head_to_dependent), for the chosen layer, head and direction",
        }
        if self.root is not None:
            details["root"] = asdict(self.root)
            details["with_root_relations"] = [r.relation for r in self.with_root]
            details["root_accuracy"] = (
                "fraction of the scored root words at which the chosen head's argmax, over "
                "every word the root word included, is the root word itself (its row: "
                "dependent_to_head; its column: head_to_dependent)"
            )
        return details


def _macro(values: Sequence[float], relations: Sequence[RelationScore]) -> Metric:
    """A mean over relations, with the arcs of those relations as its examples."""
    return Metric(fmean(values), n=sum(r.arcs for r in relations))


def _share(value: float, n: int) -> Metric:
    """A proportion with its binomial standard error (the selection's optimism aside)."""
    return Metric(value, stderr=(value * (1 - value) / n) ** 0.5 if n else None, n=n)


def relation_report(
    counts: HeadCounts,
    selection: HeadCounts | None,
    label_sets: Mapping[str, Callable[[str], str]],
    table_set: str,
    top: int,
    short_distance: float,
    root_words: int,
    roots: HeadCounts | None = None,
    roots_selection: HeadCounts | None = None,
) -> RelationReport:
    """The report of ``counts``; with ``roots`` (the root words' counts from
    ``count_heads``), the root relation and Chen et al.'s with-root relation set too."""
    every = {
        name: score_relations(
            counts.merged(rename), selection.merged(rename) if selection is not None else None
        )
        for name, rename in label_sets.items()
    }
    pooled = score_relations(counts.pooled(), selection.pooled() if selection else None)[0]
    rows = every[table_set]
    no_punct = [r for r in rows if r.relation != PUNCT]
    root = None
    with_root: list[RelationScore] = []
    if roots is not None and roots.arcs.sum() > 0:
        (root,) = score_relations(roots, roots_selection)
        with_root = sorted([*rows, root], key=lambda r: (-r.arcs, r.relation))
    return RelationReport(
        table=rows[:top] if top else rows,
        table_set=table_set,
        pooled=pooled,
        every=every,
        short_distance=short_distance,
        root_words=root_words,
        no_punct=no_punct[:top] if top else no_punct,
        root=root,
        with_root=with_root[:top] if top else with_root,
    )


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _mode_label(result: Any) -> str:
    mode = result.mode
    if mode.exact or not mode.definition:
        return mode.name
    return f"{mode.name} ({mode.definition})"


def _relation_rows(
    relations: Sequence[str], by_mode: Sequence[Mapping[str, Any]], first: Mapping[str, Any]
) -> list[str]:
    lines = []
    for relation in relations:
        row = first[relation]
        cells = [
            _percent(rows.get(relation, {}).get("best", {}).get("accuracy")) for rows in by_mode
        ]
        lines.append(
            f"| {relation} | {row['arcs']} | {row['mean_distance']:.2f} | "
            + " | ".join(cells)
            + f" | {_percent(row['baseline'])} ({row['baseline_offset']:+d}) |"
        )
    return lines


def _summary_rows(results: Sequence[Any], summary: Sequence[tuple[str, str]]) -> list[str]:
    first = results[0]
    baselines = {"macro": "baseline_macro", "all_arcs": "baseline_all_arcs"}
    lines = []
    for title, metric in summary:
        values = [r.metrics.get(metric) for r in results]
        baseline_key = baselines.get(metric)
        baseline = first.metrics.get(baseline_key) if baseline_key else None
        lines.append(
            f"| **{title}** | | | "
            + " | ".join(_percent(v.value if v else None) for v in values)
            + f" | {_percent(baseline.value if baseline else None)} |"
        )
    return lines


def _root_section(results: Sequence[Any], table_head: list[str], short: float) -> list[str]:
    """Chen et al.'s Root row and the averages over their relation set, when scored."""
    first = results[0]
    root = first.details.get("root")
    if root is None:
        return []
    cells = [_percent(r.details.get("root", {}).get("best", {}).get("accuracy")) for r in results]
    relations = ", ".join(first.details.get("with_root_relations", []))
    return [
        "## With the root relation (Chen et al.'s Table A3 set)",
        "",
        "Root scored as in Chen et al.'s Table A3 (distance 0: spaCy makes the root its own "
        "head): a head is right when the root word's argmax, the word itself included, is "
        "the root word. The averages below are over the most frequent relations with root "
        f"ranked among them ({relations}); the averages above leave root out.",
        "",
        *table_head,
        f"| {root['relation']} | {root['arcs']} | {root['mean_distance']:.2f} | "
        + " | ".join(cells)
        + " | – |",
        *_summary_rows(
            results,
            (
                (f"short avg with root (≤ {short:g})", "macro_short_with_root"),
                (f"long avg with root (> {short:g})", "macro_long_with_root"),
                ("macro avg with root", "macro_with_root"),
            ),
        ),
        "",
    ]


def mode_table_markdown(results: Sequence[Any]) -> str:
    """Table A3 for one model: a row per relation, a column per mode, summary rows below;
    when root was scored, its row and the with-root averages (Table A3's own set); then
    the same scores in Clark et al.'s Table 1 layout (punct left out, root words in the
    "All" row) so a reader can set them beside the paper's.

    ``results`` are finished ``dep_heads`` cells of one model (one per mode); the rows come
    from the first cell's table, and every cell scored the same trees (same data hash).
    """
    first = results[0]
    set_name = first.details["table_set"]
    by_mode = [{row["relation"]: row for row in r.details["relations"][set_name]} for r in results]
    labels = [_mode_label(r) for r in results]
    header = ["relation", "arcs", "mean distance", *labels, "best offset"]
    table_head = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    short = first.details["short_distance"]
    lines = [
        f"# Dependency heads · {first.model.spec}",
        "",
        *limit_lines(results),
        f"Best-head accuracy (%) per relation ({set_name} labels), picked and scored on "
        f"{first.task.settings.get('input')} (sha256 {first.task.data_hash}); best offset "
        "= Clark et al.'s fixed-offset baseline (−3…+2).",
        "",
        *table_head,
        *_relation_rows(first.details["table_relations"], by_mode, by_mode[0]),
        *_summary_rows(
            results,
            (
                (f"short avg (≤ {short:g})", "macro_short"),
                (f"long avg (> {short:g})", "macro_long"),
                ("macro avg", "macro"),
                ("macro avg, held-out pick", "macro_held_out"),
                ("all non-root arcs, one head", "all_arcs"),
            ),
        ),
        "",
        *_root_section(results, table_head, short),
        "## In Clark et al.'s Table 1 layout",
        "",
        'The same scores over Clark et al.\'s relation set (punct left out); their "All" '
        "row counts every word, root words included (never right for a head).",
        "",
        *table_head,
        *_relation_rows(first.details.get("no_punct_relations", []), by_mode, by_mode[0]),
        *_summary_rows(
            results,
            (
                ("macro avg, no punct", "macro_no_punct"),
                ("All: every word, one head", "all_words"),
            ),
        ),
        "",
    ]
    return "\n".join(lines + flag_section(results))


def write_mode_table(results: Sequence[Any], folder: Path) -> list[Path]:
    """Write ``table.md`` (Table A3) and ``accuracy_by_distance.png`` (Fig. 5) for the modes."""
    from posharness.storage.io import atomic_write_text
    from posharness.tasks.dep_heads.figures import accuracy_by_distance

    hashes = {r.task.data_hash for r in results}
    if len(hashes) > 1:  # cells of different data must not share one table
        results = [r for r in results if r.task.data_hash == results[0].task.data_hash]
    table = folder / "table.md"
    atomic_write_text(table, mode_table_markdown(results))
    set_name = results[0].details["table_set"]
    chosen = set(results[0].details["table_relations"])
    series = {
        _mode_label(r): [
            (row["relation"], row["mean_distance"], row["best"]["accuracy"])
            for row in r.details["relations"][set_name]
            if row["relation"] in chosen
        ]
        for r in results
    }
    figure = accuracy_by_distance(
        series,
        folder / "accuracy_by_distance.png",
        f"{results[0].model.spec} · best head per relation, by attention mode",
        flagged={_mode_label(r) for r in results if r.flags},
    )
    return [table, figure]
