"""``posharness build-probes shuffle``: what a build writes, and what it refuses in one line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from posharness.cli import main
from posharness.tasks.shuffle.probes import PROBES, build_probes
from posharness.tasks.shuffle.snli import read_snli
from posharness.tasks.shuffle.trees import render
from tests.snli_parsed import snli_records, write_jsonl


def build(tmp_path: Path, rows: list, *extra: str) -> int:
    source = write_jsonl(tmp_path / "snli_test.jsonl", rows)
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "build-probes",
                "shuffle",
                "--snli",
                str(source),
                "--out",
                str(tmp_path / "out"),
                *extra,
            ]
        )
    return int(exit_info.value.code)


def probe_file(tmp_path: Path, name: str) -> list[dict]:
    lines = (tmp_path / "out" / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_a_build_writes_every_probe_with_provenance_and_a_summary(tmp_path: Path) -> None:
    rows = snli_records(30, seed=0, prefix="t")
    assert build(tmp_path, rows, "--seed", "3") == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert set(summary["probes"]) == set(PROBES)
    for name in PROBES:
        records = probe_file(tmp_path, name)
        assert len(records) == summary["probes"][name]["size"] > 0
        sizes = summary["probes"][name]["size"] + sum(summary["probes"][name]["excluded"].values())
        assert sizes == 30, name  # every pair is either in the probe or counted as excluded
        first = records[0]
        assert first["provenance"]["seed"] == 3
        assert first["provenance"]["source_sha256"] == summary["source_sha256"]
        assert first["provenance"]["rule"] == summary["probes"][name]["rule"]
    assert summary["probes"]["shuffle_sr"]["excluded"]["not_entailment"] == 20
    assert not list((tmp_path / "out").glob(".probes-*"))  # staging folder removed


def test_shuffle_x_keeps_hypothesis_and_label_and_the_original_pair(tmp_path: Path) -> None:
    rows = snli_records(12, seed=1, prefix="t")
    assert build(tmp_path, rows) == 0
    by_id = {r["pairID"]: r for r in rows}
    for record in probe_file(tmp_path, "shuffle_4"):
        source = by_id[record["id"]]
        assert record["label"] == record["original"]["label"] == source["gold_label"]
        assert record["hypothesis"] == record["original"]["hypothesis"]
        assert record["premise"] != record["original"]["premise"]
        change = record["change"]
        assert Counter(change["after"]) == Counter(change["before"])
        assert record["premise"] == render(change["after"])
        assert record["original"]["premise"] == render(change["before"])
        assert change["end"] - change["start"] == 4


def test_shuffle_sr_pairs_become_contradictions_beside_their_entailing_originals(
    tmp_path: Path,
) -> None:
    assert build(tmp_path, snli_records(9, seed=2, prefix="t")) == 0
    records = probe_file(tmp_path, "shuffle_sr")
    assert len(records) == 3  # the three entailment pairs
    for record in records:
        assert (record["original"]["label"], record["label"]) == ("entailment", "contradiction")
        assert record["change"]["side"] == "premise"
        agent, patient = record["change"]["agent_words"], record["change"]["patient_words"]
        after = [word.lower() for word in record["change"]["after"]]
        assert after[: len(patient)] == [word.lower() for word in patient]  # patient first
        verb = after.index(record["change"]["verb"].lower())
        assert after[verb + 1 : verb + 1 + len(agent)] == [word.lower() for word in agent]


def test_the_same_seed_gives_identical_files_and_another_seed_other_shuffles(
    tmp_path: Path,
) -> None:
    source = write_jsonl(tmp_path / "snli.jsonl", snli_records(30, seed=0, prefix="t"))
    first = build_probes(read_snli(source), seed=0).records
    again = build_probes(read_snli(source), seed=0).records
    other = build_probes(read_snli(source), seed=1).records
    assert first == again
    assert [r["premise"] for r in first["shuffle_random"]] != [
        r["premise"] for r in other["shuffle_random"]
    ]


def test_malformed_parses_are_counted_not_fatal(tmp_path: Path) -> None:
    rows = snli_records(6, seed=0, prefix="t")
    rows[0]["sentence1_parse"] = rows[0]["sentence1_parse"][:-3]  # unbalanced brackets
    rows[1]["sentence1_parse"] = rows[1]["sentence1_parse"].replace("(DT the)", "(DT an)", 1)
    assert build(tmp_path, rows) == 0
    excluded = json.loads((tmp_path / "out" / "summary.json").read_text())["probes"]
    assert excluded["shuffle_random"]["excluded"] == {"malformed_parse": 1, "leaves_mismatch": 1}
    assert len(probe_file(tmp_path, "shuffle_random")) == 4


def test_a_line_that_is_not_json_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [*snli_records(5, seed=0, prefix="t"), "{not json"]
    assert build(tmp_path, rows) == 2
    assert "snli_test.jsonl:6: not a JSON line" in one_line_error(capsys)
    assert not (tmp_path / "out").exists()


def test_records_without_parses_need_a_parser_and_say_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("nltk")
    try:
        import benepar  # noqa: F401

        pytest.skip("benepar is installed here: the missing-parser message cannot show")
    except ImportError:
        pass
    rows = snli_records(3, seed=0, prefix="t")
    for row in rows:
        del row["sentence1_parse"], row["sentence2_parse"]
    assert build(tmp_path, rows) == 2
    err = one_line_error(capsys)
    assert "snli_test.jsonl:1: the record has no sentence1_parse" in err
    assert "benepar" in err and "pip install" in err


def test_an_empty_probe_fails_the_build_before_any_file_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = snli_records(6, seed=0, prefix="t")
    for row in rows:
        row["gold_label"] = "neutral"  # no entailment pair: Shuffle-SR has nothing
    assert build(tmp_path, rows) == 2
    err = one_line_error(capsys)
    assert "probe shuffle_sr would be empty" in err and "not_entailment 6" in err
    assert not list((tmp_path / "out").glob("*.jsonl"))


def test_a_subset_of_probes_and_a_bad_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert build(tmp_path, snli_records(6, seed=0, prefix="t"), "--probes", "shuffle_3") == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "shuffle_3.jsonl",
        "summary.json",
    ]
    assert build(tmp_path, snli_records(6, seed=0, prefix="t"), "--probes", "shuffle_9") == 2
    assert "unknown probe 'shuffle_9'" in one_line_error(capsys)


def test_an_unknown_label_is_named_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = snli_records(4, seed=0, prefix="t")
    rows[2]["gold_label"] = "maybe"
    assert build(tmp_path, rows) == 2
    assert "snli_test.jsonl:3: unknown gold_label 'maybe'" in one_line_error(capsys)
