"""Planning a word-swap probe builds only the planned probe, once per inputs (issue 40, part 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import posharness.tasks.shuffle.probe_sets as probe_sets
from posharness.contracts.task import resolve_options
from posharness.tasks.shuffle.task import ShuffleTask
from tests.snli_parsed import snli_records, write_jsonl, write_parsed_snli


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The probes each call of build_probes built; in-process memos start empty."""
    monkeypatch.setattr(probe_sets, "_SETS", {})
    monkeypatch.setattr(probe_sets, "_SOURCES", {})
    monkeypatch.setattr(probe_sets, "_PARSED", {})
    made: list[list[str]] = []
    real = probe_sets.build_probes

    def counted(source, seed, probes, **kw):  # type: ignore[no-untyped-def]
        made.append(list(probes))
        return real(source, seed, probes, **kw)

    monkeypatch.setattr(probe_sets, "build_probes", counted)
    return made


def identity(task: str, data: Path) -> dict:
    probe = ShuffleTask(task)
    return probe.data_identity(resolve_options(probe.spec, {}), data)


def forget_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a new process: nothing kept in memory, only the cache folder."""
    monkeypatch.setattr(probe_sets, "_SETS", {})
    monkeypatch.setattr(probe_sets, "_SOURCES", {})


def test_planning_shuffle_sr_builds_shuffle_sr_alone(tmp_path: Path, builds: list) -> None:
    identity("shuffle_sr", write_parsed_snli(tmp_path / "data"))
    assert builds == [["shuffle_sr"]]


def test_a_second_plan_reads_the_kept_set_and_rebuilds_nothing(
    tmp_path: Path, builds: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_parsed_snli(tmp_path / "data")
    first = identity("shuffle_3", data)
    forget_memory(monkeypatch)
    again = identity("shuffle_3", data)
    assert builds == [["shuffle_3"]]
    assert again == first  # same cell ids: the size and provenance come from the kept summary


def test_the_kept_records_are_the_built_ones(
    tmp_path: Path, builds: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_parsed_snli(tmp_path / "data") / "snli" / "snli_1.0" / "snli_1.0_test.jsonl"
    built = probe_sets.probe_set(source, 0, "shuffle_random", tmp_path / "cache").records()
    forget_memory(monkeypatch)
    kept = probe_sets.probe_set(source, 0, "shuffle_random", tmp_path / "cache")
    assert kept.path is not None and kept.records() == built
    assert len(builds) == 1


def test_other_bytes_or_another_seed_build_again(
    tmp_path: Path, builds: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_parsed_snli(tmp_path / "data")
    source = data / "snli" / "snli_1.0" / "snli_1.0_test.jsonl"
    first = identity("shuffle_sr", data)
    probe_sets.probe_set(source, 1, "shuffle_sr", tmp_path / "cache")
    write_jsonl(source, snli_records(30, 7, "test"))  # the same name, other pairs
    forget_memory(monkeypatch)
    changed = identity("shuffle_sr", data)
    assert len(builds) == 3
    assert changed["probe"]["source_sha256"] != first["probe"]["source_sha256"]


def test_a_torn_cache_entry_is_rebuilt_not_an_error(
    tmp_path: Path, builds: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_parsed_snli(tmp_path / "data")
    first = identity("shuffle_4", data)
    for summary in Path(tmp_path / "cache").rglob("summary.json"):
        summary.write_text("{not json")
    forget_memory(monkeypatch)
    assert identity("shuffle_4", data) == first
    assert len(builds) == 2
    kept = next(Path(tmp_path / "cache").rglob("summary.json"))
    assert json.loads(kept.read_text())["probes"]["shuffle_4"]["size"] == first["size"]


def test_a_missing_source_is_the_one_line_data_error(tmp_path: Path, builds: list) -> None:
    from posharness.base.errors import DataError

    with pytest.raises(DataError, match="no such file"):
        probe_sets.probe_set(tmp_path / "absent.jsonl", 0, "shuffle_sr", tmp_path / "cache")
    assert builds == []
