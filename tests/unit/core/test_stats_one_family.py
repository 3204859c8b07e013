"""Issue 38, part 2: compare and the report's comparison page adjust over one family.

The family is the tests printed (``compare.family_keys``). Before, ``compare`` tested every
shared metric and printed the headline ones while the report tested only the headline
ones, so one raw p got two different Holm-adjusted values. Here a second per-example
metric that is not a headline one makes the two families differ if they ever drift.
"""

from __future__ import annotations

import json
from pathlib import Path

from posharness.boards import leaderboard as lb
from posharness.boards.compare import compare_files
from posharness.contracts.results import Metric, ModeInfo
from posharness.report.collect import ReportInputs, collect
from tests.cli_helpers import cli
from tests.result_factory import save_cell, synthetic_result, write_examples

MODELS = {"m-one": "f1aaaaaaaaaaaaaa", "m-two": "f2bbbbbbbbbbbbbb"}


def _board(root: Path, name: str, better: bool) -> Path:
    folder = root / "runs" / name
    for k, model in enumerate(MODELS):
        right = 48 if better and model == "m-one" else 20 + k + 2 * better
        extra = 40 if better else 30  # a non-headline metric, also tested when printed
        acc = [1] * right + [0] * (60 - right)
        hard = [1] * extra + [0] * (60 - extra)
        stem = folder / model / "probe"
        examples = write_examples(
            stem,
            (
                {"id": str(i), "acc": a, "hard_acc": h}
                for i, (a, h) in enumerate(zip(acc, hard, strict=True))
            ),
        )
        result = synthetic_result(
            spec=model,
            fingerprint=MODELS[model],
            task="probe",
            metrics={"acc": Metric(right / 60, n=60), "hard_acc": Metric(extra / 60, n=60)},
            headline=["acc"],
            cell_id=f"{MODELS[model]}-both-probe",
            mode=ModeInfo(name="both", exact=True),
            examples_file=examples,
        )
        save_cell(folder, result)
    path = root / "boards" / f"{name}.json"
    lb.save(lb.build(lb.collect_results(folder), name, path), path)
    return path


def _report_p(a: Path, b: Path, all_metrics: bool) -> dict:
    view = collect(ReportInputs(boards=(), comparisons=((a, b),), all_metrics=all_metrics))
    (page,) = view.comparisons
    return {
        (p.a.row.model, m.key): m.test.p_adjusted
        for p in page.pairs
        for m in p.metrics
        if m.test is not None
    }


def test_compare_and_the_report_print_identical_holm_p_values(tmp_path, capsys):
    a, b = _board(tmp_path, "a", False), _board(tmp_path, "b", True)
    for all_metrics in (False, True):
        capsys.readouterr()
        flags = ["--all-metrics"] * all_metrics
        assert cli("compare", str(a), str(b), "--format", "json", *flags) == 0
        document = json.loads(capsys.readouterr().out)
        printed = {
            (r["a_model"], f"{r['task']}/{r['metric']}"): r["p_holm"]
            for r in document["comparisons"]
            if r["test"] is not None
        }
        assert printed == _report_p(a, b, all_metrics)
        assert document["family_size"] == len(printed) == (4 if all_metrics else 2)


def test_the_family_is_the_printed_metrics(tmp_path, capsys):
    a, b = _board(tmp_path, "a", False), _board(tmp_path, "b", True)
    shown = compare_files(a, b, all_metrics=False)
    assert {m.key for row in shown for m in row.metrics} == {"probe/acc"}
    every = compare_files(a, b, all_metrics=True)
    assert {m.key for row in every for m in row.metrics} == {"probe/acc", "probe/hard_acc"}
    capsys.readouterr()
    assert cli("compare", str(a), str(b)) == 0
    assert "adjusted over the 2 tests printed" in " ".join(capsys.readouterr().out.split())
