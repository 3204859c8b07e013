"""The fine-tuning dataset catalogue, finding splits on disk, loading them, and the hub path."""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from posharness.base.errors import DataError, OptionError
from posharness.storage.hashing import hash_file
from posharness.tasks.finetune.data import hub as finetune_hub
from posharness.tasks.finetune.data import locate as finetune_data
from posharness.tasks.finetune.data.catalogue import READERS
from posharness.tasks.finetune.data.hub import HubSource, hub_reachable, load_hub_split
from posharness.tasks.finetune.data.locate import (
    DATASETS,
    HubSplit,
    dataset,
    load_split,
    locate_splits,
)

ALL_TASKS = "cola sst2 mrpc stsb qqp mnli qnli rte wnli mr subj cr mpqa trec sst sickr sicke snli"
RTE_HEADER = "index\tsentence1\tsentence2\tlabel\n"


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def write_rte(folder: Path, *splits: str, rows: int = 2) -> Path:
    body = "".join(
        f"{i}\tP{i}.\tH{i}.\t{('entailment', 'not_entailment')[i % 2]}\n" for i in range(rows)
    )
    for split in splits:
        write(folder / f"{split}.tsv", RTE_HEADER + body)
    return folder


def one_line(error: pytest.ExceptionInfo[Exception]) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


# The catalogue


def test_catalogue_holds_every_fine_tuning_task_with_a_reader_for_each_split() -> None:
    assert sorted(DATASETS) == sorted(ALL_TASKS.split())
    for name, spec in DATASETS.items():
        assert dataset(name) is spec and spec.name == name
        assert all(READERS[name].files_for(split) for split in spec.splits)
        assert spec.is_regression == (spec.range is not None)
        if spec.hub is not None:
            assert set(spec.hub.splits) <= set(spec.splits)


def test_glue_lists_no_unlabelled_test_split_and_mnli_has_both_dev_sets() -> None:
    glue = [spec for spec in DATASETS.values() if spec.title.startswith("GLUE")]
    assert len(glue) == 9 and all("test" not in spec.splits for spec in glue)
    assert dataset("mnli").splits == ("train", "dev_matched", "dev_mismatched")


def test_label_orders_follow_the_hub_class_orders() -> None:
    assert dataset("wnli").labels == ("not_entailment", "entailment")
    assert dataset("rte").labels == ("entailment", "not_entailment")
    assert (
        dataset("snli").labels
        == dataset("mnli").labels
        == ("entailment", "neutral", "contradiction")
    )
    assert (dataset("stsb").range, dataset("sickr").range) == ((0.0, 5.0), (1.0, 5.0))


def test_dataset_specs_are_hashable_so_they_can_key_caches() -> None:
    assert len({spec: spec.name for spec in DATASETS.values()}) == len(DATASETS)


# Finding the splits


def test_splits_are_found_in_the_conventional_layout_under_data_dir(tmp_path: Path) -> None:
    write_rte(tmp_path / "glue_data" / "RTE", "train", "dev")
    located = locate_splits(dataset("rte"), tmp_path, None, {})
    assert located == {s: tmp_path / "glue_data" / "RTE" / f"{s}.tsv" for s in ("train", "dev")}


def test_data_dir_may_point_inside_the_layout(tmp_path: Path) -> None:
    write_rte(tmp_path / "glue_data" / "RTE", "train", "dev")
    located = locate_splits(dataset("rte"), tmp_path / "glue_data", None, {})
    assert located["dev"] == tmp_path / "glue_data" / "RTE" / "dev.tsv"


def test_explicit_file_beats_folder_which_beats_data_dir(tmp_path: Path) -> None:
    write_rte(tmp_path / "glue_data" / "RTE", "train", "dev")
    mine = write_rte(tmp_path / "mine", "dev")
    sample = write(tmp_path / "sample.tsv", RTE_HEADER + "0\tP.\tH.\tentailment\n")
    located = locate_splits(dataset("rte"), tmp_path, str(mine), {"train": str(sample)})
    assert located == {"train": sample, "dev": mine / "dev.tsv"}


def test_senteval_two_file_split_is_located_as_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "senteval" / "downstream" / "MR"
    write(folder / "rt-polarity.neg", "bad .\n")
    write(folder / "rt-polarity.pos", "good .\n")
    assert locate_splits(dataset("mr"), tmp_path, None, {}) == {"all": folder}


def test_missing_split_says_where_it_looked_and_how_to_fix_it_fast(tmp_path: Path) -> None:
    write_rte(tmp_path / "glue_data" / "RTE", "dev")
    start = time.perf_counter()
    with pytest.raises(DataError) as error:
        locate_splits(dataset("rte"), tmp_path, None, {})
    assert time.perf_counter() - start < 0.5
    message = one_line(error)
    assert message.startswith("rte: no train split found")
    assert str(tmp_path / "glue_data" / "RTE" / "train.tsv") in message
    assert "download_glue_data.py" in message and "--data-dir DIR" in message
    assert "--task-arg rte.train=FILE" in message and "--task-arg rte.path=DIR" in message
    assert "hub copy (nyu-mll/glue/rte) is not tried in offline mode" in message


def test_missing_split_without_any_location_says_no_data_dir_was_given() -> None:
    with pytest.raises(DataError) as error:
        locate_splits(dataset("sst"), None, None, {})
    assert "no train split found (nor dev, test): no --data-dir given" in one_line(error)


def test_explicit_file_that_does_not_exist_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    write_rte(tmp_path / "glue_data" / "RTE", "train", "dev")
    with pytest.raises(DataError) as error:
        locate_splits(dataset("rte"), tmp_path, None, {"train": str(tmp_path / "typo.tsv")})
    assert "typo.tsv: no such file" in one_line(error)


def test_user_folder_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataError) as error:
        locate_splits(dataset("rte"), None, str(tmp_path / "nowhere"), {})
    assert "no such folder" in one_line(error)


def test_file_for_a_split_the_dataset_does_not_have_is_an_option_error(tmp_path: Path) -> None:
    with pytest.raises(OptionError) as error:
        locate_splits(dataset("rte"), tmp_path, None, {"test": "x.tsv"})
    assert "its splits are train, dev" in one_line(error)


def test_hub_is_used_only_when_no_local_file_and_reachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_rte(tmp_path / "glue_data" / "RTE", "train")
    monkeypatch.setattr(finetune_data, "hub_reachable", lambda: True)
    located = locate_splits(dataset("rte"), tmp_path, None, {})
    assert located["train"] == tmp_path / "glue_data" / "RTE" / "train.tsv"
    assert located["dev"] == HubSplit(dataset("rte").hub, "validation")


# Loading


def test_loaded_split_records_its_file_and_the_sha256_of_its_bytes(tmp_path: Path) -> None:
    path = write_rte(tmp_path, "train", rows=3) / "train.tsv"
    loaded = load_split(dataset("rte"), "train", path)
    assert (loaded.name, loaded.source, loaded.dropped) == ("train", str(path), {})
    assert loaded.content_hash == hash_file(path) and len(loaded.content_hash) == 64
    assert [e.id for e in loaded.examples] == ["0", "1", "2"]


def test_two_file_split_hash_changes_when_either_file_changes(tmp_path: Path) -> None:
    write(tmp_path / "subj.objective", "a plot .\n")
    pos = write(tmp_path / "subj.subjective", "i loved it .\n")
    before = load_split(dataset("subj"), "all", tmp_path)
    write(pos, "i hated it .\n")
    after = load_split(dataset("subj"), "all", tmp_path)
    assert before.content_hash != after.content_hash
    assert after.source == f"{tmp_path}/{{subj.objective,subj.subjective}}"


def test_limit_keeps_the_first_examples_after_dropping(tmp_path: Path) -> None:
    lines = "".join(
        f'{{"gold_label": "{gold}", "pairID": "p{i}", "sentence1": "A.", "sentence2": "B."}}\n'
        for i, gold in enumerate(["-", "neutral", "-", "entailment", "contradiction"])
    )
    path = write(tmp_path / "snli_1.0_dev.jsonl", lines)
    loaded = load_split(dataset("snli"), "dev", path, limit=2)
    assert [e.id for e in loaded.examples] == ["p1", "p3"]
    assert loaded.dropped == {"no gold label": 2}


def test_limit_on_a_two_file_split_keeps_both_classes(tmp_path: Path) -> None:
    write(tmp_path / "rt-polarity.neg", "bad .\nworse .\n")
    write(tmp_path / "rt-polarity.pos", "good .\nbetter .\n")
    loaded = load_split(dataset("mr"), "all", tmp_path, limit=2)
    assert sorted(e.label for e in loaded.examples) == [0, 1]


def test_empty_split_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "dev.tsv", RTE_HEADER)
    with pytest.raises(DataError) as error:
        load_split(dataset("rte"), "dev", path)
    assert one_line(error).startswith(f"{path}: no examples in the dev split of GLUE RTE")


def test_split_of_only_dropped_rows_is_empty_and_says_what_was_skipped(tmp_path: Path) -> None:
    line = '{"gold_label": "-", "pairID": "p", "sentence1": "A.", "sentence2": "B."}\n'
    path = write(tmp_path / "snli_1.0_test.jsonl", line)
    with pytest.raises(DataError) as error:
        load_split(dataset("snli"), "test", path)
    assert "(skipped: 1 no gold label)" in one_line(error)


@pytest.mark.parametrize(("split", "limit"), [("test", None), ("train", 0)])
def test_unknown_split_or_non_positive_limit_is_an_option_error(
    tmp_path: Path, split: str, limit: int | None
) -> None:
    path = write_rte(tmp_path, "train") / "train.tsv"
    with pytest.raises(OptionError) as error:
        load_split(dataset("rte"), split, path, limit)
    one_line(error)


# The hub, offline only: nothing here opens a connection


def refuse_connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    attempts: list[tuple] = []

    def connect(address: tuple, timeout: float) -> None:
        attempts.append(address)
        raise OSError("network is unreachable")

    monkeypatch.setattr(finetune_hub.socket, "create_connection", connect)
    monkeypatch.setattr(finetune_hub, "_reachable", {})
    return attempts


@pytest.mark.parametrize(
    ("variable", "value"), [("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "true")]
)
def test_hub_is_unreachable_at_once_in_offline_mode(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    attempts = refuse_connections(monkeypatch)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv(variable, value)
    assert hub_reachable() is False and attempts == []


def test_hub_reachability_is_tried_once_and_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = refuse_connections(monkeypatch)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    assert (hub_reachable(), hub_reachable()) == (False, False)
    assert attempts == [("huggingface.co", 443)]


class FakeTable:
    """What `datasets.load_dataset` returns, as far as the loader uses it."""

    def __init__(self, rows: list[dict], fingerprint: str = "f00d") -> None:
        self.rows, self._fingerprint = rows, fingerprint
        self.column_names = list(rows[0])

    def __iter__(self) -> Iterator[dict]:
        return iter(self.rows)


def fake_datasets(monkeypatch: pytest.MonkeyPatch, load_dataset: Callable[..., object]) -> None:
    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))


def test_hub_split_drops_unlabelled_rows_and_is_identified_by_its_fingerprint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [
        {"premise": "A.", "hypothesis": "B.", "label": 2, "idx": 0},
        {"premise": "C.", "hypothesis": "D.", "label": -1, "idx": 1},
    ]
    calls = []
    fake_datasets(monkeypatch, lambda *args, **kw: calls.append((args, kw)) or FakeTable(rows))
    spec = dataset("mnli")
    loaded = load_split(spec, "dev_matched", HubSplit(spec.hub, "validation_matched"))
    assert calls == [(("nyu-mll/glue", "mnli"), {"split": "validation_matched"})]
    assert [(e.id, e.text_a, e.text_b, e.label) for e in loaded.examples] == [("0", "A.", "B.", 2)]
    assert (loaded.source, loaded.content_hash) == ("hub:nyu-mll/glue/mnli@f00d", "f00d")
    assert loaded.dropped == {"no gold label": 1}


def test_hub_trec_labels_are_mapped_to_our_class_order(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"text": "Why ?", "coarse_label": 2, "fine_label": 9}]  # hub 2 is DESC
    fake_datasets(monkeypatch, lambda *args, **kw: FakeTable(rows))
    spec = dataset("trec")
    (example,) = load_hub_split(spec, "test", HubSplit(spec.hub, "test")).examples
    assert spec.labels[example.label] == "DESC" and example.id == "test:0"


def test_hub_failure_is_one_line_saying_what_to_download(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kw: object) -> None:
        raise ConnectionError("Couldn't reach the hub\nTraceback details\nmore")

    fake_datasets(monkeypatch, fail)
    spec = dataset("snli")
    with pytest.raises(DataError) as error:
        load_split(spec, "train", HubSplit(spec.hub, "train"))
    message = one_line(error)
    assert "ConnectionError: Couldn't reach the hub" in message and "Traceback" not in message
    assert "https://nlp.stanford.edu/projects/snli/" in message and "snli/snli_1.0/" in message


def test_hub_source_equal_by_value_hashes_equal() -> None:
    def make() -> HubSource:
        return HubSource("o/d", "c", {"train": "train"}, "a", None, "label", {0: "x"})

    assert make() is not make() and make() == make() and hash(make()) == hash(make())
