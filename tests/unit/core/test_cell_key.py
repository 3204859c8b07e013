"""One cell key (issue 28, part 1): change each input of a cell's key in turn and check
together what it moves — the cell id, the result file, the leaderboard row key and the
pairing key ``compare`` uses — and that a result file read back gives the same key."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from posharness.contracts.cell_key import CellKey, PairKey, RowKey, task_of_file
from posharness.contracts.results import key_of_result
from posharness.run.config import RunConfig
from posharness.run.plan import Cell, plan
from tests.unit.core.test_cell_identity import FAST, write_corpus

ID, FILE, ROW, PAIR = "cell id", "result file", "row key", "pairing key"


def config(tiny_bert: Path, tmp_path: Path, **overrides) -> RunConfig:
    corpus = write_corpus(tmp_path / "corpus.txt")
    values = dict(
        models=[f"hf:{tiny_bert}"],
        tasks=["locality_symmetry"],
        modes=["positional"],  # the mode the split definition and corpus change
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
        task_args={"locality_symmetry": dict(FAST)},
        model_args={"reference_corpus": str(corpus)},
    )
    values.update(overrides)
    return RunConfig(**values)


def planned(tiny_bert: Path, tmp_path: Path, device: str = "cpu", **overrides) -> Cell:
    (cell,) = plan(config(tiny_bert, tmp_path, **overrides), device)
    return cell


def outputs(cell: Cell) -> dict[str, object]:
    return {ID: cell.cell_id, FILE: cell.path, ROW: cell.key.row, PAIR: cell.key.pairing}


def test_each_key_input_moves_exactly_what_it_should(tiny_bert: Path, tmp_path: Path) -> None:
    other_corpus = tmp_path / "other.txt"
    other_corpus.write_text("a completely different corpus of words .\n" * 30, encoding="utf-8")
    corpus = str(tmp_path / "corpus.txt")
    base = outputs(planned(tiny_bert, tmp_path))
    # input → (the plan's change, what it must move; everything else must stay)
    varied = {
        "seed": (dict(seeds=[1]), {ID, FILE}),  # seeds are averaged within a row
        "task option": (dict(task_args={"locality_symmetry": {**FAST, "length": "12"}}), {ID}),
        "task": (dict(tasks=["toeplitz"], task_args={}), {ID, FILE}),  # a column, not a row
        "mode": (dict(modes=["contextual"]), {ID, FILE, ROW, PAIR}),
        "limit": (dict(limit=3), {ID, FILE, ROW, PAIR}),
        "train limit": (dict(train_limit=5), {ID, FILE, ROW, PAIR}),
        # the fingerprint holds the dtype: another model, paired with the float32 one
        "dtype": (dict(dtype="bfloat16"), {ID, FILE, ROW}),
        "reference corpus": (
            dict(model_args={"reference_corpus": str(other_corpus)}),
            {ID, FILE, ROW, PAIR},
        ),
        "split definition": (
            dict(model_args={"reference_corpus": corpus, "absolute": "positional-stream"}),
            {ID, FILE, ROW, PAIR},
        ),
        # a forced attention path: its own row (and folder), paired with the default one
        "attention": (
            dict(model_args={"reference_corpus": corpus, "attention": "eager"}),
            {FILE, ROW},
        ),
    }
    for name, (change, moves) in varied.items():
        found = outputs(planned(tiny_bert, tmp_path, **change))
        moved = {what for what in base if found[what] != base[what]}
        assert moved == moves, f"changing the {name} moved {sorted(moved)}, not {sorted(moves)}"
    # a GPU: other kernels, so another id, file and row, paired with the CPU row
    on_gpu = outputs(planned(tiny_bert, tmp_path, device="cuda", dtype="float32"))
    assert {what for what in base if on_gpu[what] != base[what]} == {ID, FILE, ROW}
    assert on_gpu == outputs(planned(tiny_bert, tmp_path, device="cuda:1", dtype="float32"))


def test_the_key_names_its_fields() -> None:
    key = CellKey(fingerprint="f", mode="positional", task="toeplitz", seed=2, limit=10)
    key = replace(key, device="cuda", split="tisa-mean-word", reference="corpus (sha256 1)")
    assert key.file_name == "toeplitz__positional__seed2__limit10__cuda.json"
    assert task_of_file(f"results/out/model/{key.file_name}") == "toeplitz"
    assert key.row == RowKey(
        "f", "positional", limit=10, device="cuda", split="tisa-mean-word", reference=key.reference
    )
    assert key.pairing == PairKey("positional", 10, None, "tisa-mean-word", "corpus (sha256 1)")
    assert key.row.settings() == {
        "limit": 10,
        "device": "cuda",
        "split": "tisa-mean-word",
        "reference": "corpus (sha256 1)",
    }
    assert RowKey.of("f", "positional", key.row.settings()) == key.row
    label = key.row.label(False, "tisa-mean-word", {"toeplitz": {"length": 12}})
    assert label == (
        "positional (tisa-mean-word) · limit 10 · on cuda · corpus corpus (sha256 1)"
        " · toeplitz.length=12"
    )
    assert key.row.label(False, "tisa-mean-word", settings=False) == "positional (tisa-mean-word)"


@pytest.mark.parametrize("mode", ["both", "positional"])
def test_a_result_records_its_key_and_an_older_one_derives_the_same(
    tiny_bert: Path, tmp_path: Path, mode: str
) -> None:
    from posharness.contracts.results import CellResult
    from posharness.run.runner import run

    corpus = str(write_corpus(tmp_path / "corpus.txt"))
    small = {"reference_corpus": corpus, "reference_sequences": "4", "reference_length": "16"}
    config_ = config(tiny_bert, tmp_path, modes=[mode], model_args=small)
    (done,) = run(config_)
    written = done.result
    older = CellResult.model_validate(written.model_dump(exclude={"key"}))  # before keys
    derived = key_of_result(older)
    planned_key = done.cell.key
    assert derived.cell_id == planned_key.cell_id
    assert derived.row == planned_key.row and derived.pairing == planned_key.pairing
    assert derived.file_name == planned_key.file_name == done.cell.path.name
    with_key = CellResult.model_validate_json(  # as the runner records it, read back
        older.model_copy(update={"key": planned_key}).model_dump_json()
    )
    assert with_key.key == planned_key and key_of_result(with_key) == planned_key


def test_a_version_1_result_derives_its_key() -> None:
    from posharness.contracts.results import read_result
    from tests.unit.core.test_schema_versions import FIXTURES

    path = FIXTURES / "results" / "minilm" / "locality_symmetry__both__seed0.json"
    result = read_result(path)
    key = key_of_result(result)
    assert result.key is None and key.cell_id == result.cell_id
    assert key.file_name == path.name and key.task == task_of_file(path.name)
    assert key.row == RowKey(result.model.fingerprint, "both")
