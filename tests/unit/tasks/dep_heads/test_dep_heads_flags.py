"""dep_heads counts arcs as its examples: the README's full run is not flagged as "20
examples", and a 20-sentence run is flagged for the relations it scores on a few arcs.

The relation counts are UD English EWT test's (collapsed labels, non-root arcs): the whole
file (2,077 sentences, 23,017 arcs) and its first 20 sentences (290 arcs), so the counting
is the README run's without the model.
"""

from __future__ import annotations

import numpy as np

from posharness.run.flags import degenerate_flags
from posharness.tasks.dep_heads.report import relation_report
from posharness.tasks.dep_heads.scoring import ArcBatch, HeadCounts

EWT_TEST = {
    "punct": 3065, "nsubj": 2074, "case": 1969, "det": 1854, "advmod": 1324, "nmod": 1266,
    "amod": 1247, "obl": 1158, "obj": 1153, "compound": 1073, "aux": 939, "conj": 861,
    "cc": 755, "mark": 752, "cop": 584, "acl": 375, "advcl": 368, "xcomp": 363, "flat": 357,
    "list": 279, "parataxis": 231, "ccomp": 223, "appos": 180, "nummod": 170, "expl": 80,
    "iobj": 40, "vocative": 12, "goeswith": 9, "dislocated": 4, "reparandum": 2,
}  # fmt: skip
EWT_TEST_FIRST_20 = {
    "punct": 39, "det": 31, "nsubj": 29, "case": 29, "advmod": 25, "obl": 18, "obj": 16,
    "compound": 15, "nmod": 14, "amod": 12, "aux": 12, "mark": 8, "advcl": 6, "cc": 6,
    "cop": 6, "acl": 6, "conj": 5, "flat": 3, "ccomp": 3, "xcomp": 3,
}  # fmt: skip


def scored(relation_arcs: dict[str, int], top: int = 20):
    """The relation report of a corpus with these arcs per relation; one head finds 70 %
    of every relation's heads, the other none."""
    counts = HeadCounts(layers=1, heads=2)
    labels = [relation for relation, arcs in relation_arcs.items() for _ in range(arcs)]
    n = len(labels)
    arcs = ArcBatch(
        row=np.arange(n),
        dependent=np.zeros(n, dtype=np.int64),
        head=np.ones(n, dtype=np.int64),
        label=counts.label_indices(labels),
        fold=np.arange(n) % 2,
    )
    counts.add_arcs(arcs)
    attended = np.zeros((n, 2, 2), dtype=np.int64)
    attended[:, 0, 0] = (np.arange(n) % 10 < 7).astype(np.int64)  # head 0: right 7 in 10
    counts.add_predictions(0, attended, np.full_like(attended, -1), arcs)
    same = {"full": lambda label: label, "collapsed": lambda label: label}
    return relation_report(counts, None, same, "collapsed", top, 4.0, root_words=0)


def cell_flags(report) -> list[str]:
    """What a dep_heads cell is flagged with: the task's own flags and the runner's."""
    return report.flags() + degenerate_flags("macro", report.metrics(), None)


def test_the_macro_counts_the_arcs_of_its_relations_not_the_relations():
    report = scored(EWT_TEST)
    metrics = report.metrics()
    table = sorted(EWT_TEST.values(), reverse=True)[:20]
    assert metrics["macro"].n == sum(table) != 20
    assert metrics["baseline_macro"].n == sum(table)
    assert metrics["macro_held_out"].n == sum(table)  # cross-fitted on the same arcs
    assert metrics["macro_no_punct"].n == sum(table[1:]) + sorted(EWT_TEST.values())[-21]
    assert metrics["macro_short"].n == sum(table)  # every synthetic arc is one word long
    assert "macro_long" not in metrics


def test_the_readme_full_ewt_run_flags_nothing():
    assert cell_flags(scored(EWT_TEST)) == []


def test_a_20_sentence_run_is_flagged_for_its_thin_relations():
    report = scored(EWT_TEST_FIRST_20)
    assert report.metrics()["macro"].n == sum(EWT_TEST_FIRST_20.values())  # 290 arcs
    (flag,) = cell_flags(report)
    assert flag.startswith(
        "the macro averages rest on relations scored on fewer than 30 arcs: 18 of 20 ("
    )
    assert "ccomp 3" in flag and "a larger split, or no --limit" in flag
    assert "20 examples" not in flag


def test_every_relation_in_the_table_is_counted_so_top_0_flags_rare_relations():
    (flag,) = cell_flags(scored(EWT_TEST, top=0))
    assert "scored on fewer than 30 arcs: 4 of 30 (" in flag
    assert "reparandum 2" in flag
