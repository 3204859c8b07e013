"""A cell's identity holds everything its result depends on: vary each input in turn, and
either the cell id changes or the result is the same to the byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.run.config import RunConfig
from posharness.run.plan import plan
from posharness.run.runner import run

FAST = {"length": "16", "words": "6", "bootstrap": "10", "figures": "false"}


def write_corpus(path: Path) -> Path:
    path.write_text(
        "\n".join(f"the man plays the guitar in the park number {i} ." for i in range(40)),
        encoding="utf-8",
    )
    return path


def config(tiny_bert: Path, tmp_path: Path, **overrides) -> RunConfig:
    values = dict(
        models=[f"hf:{tiny_bert}"],
        tasks=["locality_symmetry"],
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
        task_args={"locality_symmetry": dict(FAST)},
        model_args={"reference_corpus": str(write_corpus(tmp_path / "corpus.txt"))},
    )
    values.update(overrides)
    return RunConfig(**values)


def cell_id(tiny_bert: Path, tmp_path: Path, device: str = "cpu", **overrides) -> str:
    (cell,) = plan(config(tiny_bert, tmp_path, **overrides), device)
    return cell.cell_id


def test_every_input_the_result_depends_on_changes_the_cell_id(tiny_bert, tmp_path):
    other_corpus = tmp_path / "other.txt"
    other_corpus.write_text("a completely different corpus of words .\n" * 30, encoding="utf-8")
    base = cell_id(tiny_bert, tmp_path)
    varied = {
        "seed": dict(seeds=[1]),
        "limit": dict(limit=3),
        "mode": dict(modes=["positional"]),
        "dtype": dict(dtype="bfloat16"),
        "task option": dict(task_args={"locality_symmetry": {**FAST, "length": "12"}}),
        # mode both reads the positional term: its definition and corpus are inputs too
        "reference corpus": dict(model_args={"reference_corpus": str(other_corpus)}),
        "split definition": dict(
            model_args={
                "reference_corpus": str(tmp_path / "corpus.txt"),
                "absolute": "positional-stream",
            }
        ),
        "no reference corpus": dict(model_args={}),
        # a GPU's kernels give other float32 numbers than the CPU's (planning reads no
        # weights, so a CPU-only machine can plan for one)
        "device kind": dict(device="cuda", dtype="float32"),
    }
    ids = {name: cell_id(tiny_bert, tmp_path, **change) for name, change in varied.items()}
    for name, identity in ids.items():
        assert identity != base, f"changing the {name} left the cell id unchanged"
    assert len(set(ids.values())) == len(ids), "two different inputs share a cell id"
    same_kind = cell_id(tiny_bert, tmp_path, device="cuda:1", dtype="float32")
    assert same_kind == ids["device kind"]  # the kind, not the index


def test_a_task_that_reads_no_positional_term_ignores_the_reference_corpus(tiny_bert, tmp_path):
    """The corpus joins only the identities that depend on it: no needless reruns."""
    from tests.unit.tasks.dep_heads.test_dep_heads_task import write_treebank

    treebank = write_treebank(tmp_path / "trees.conllu", sentences=4)
    other = tmp_path / "other.txt"
    other.write_text("another corpus .\n" * 30, encoding="utf-8")
    dep_heads = {"dep_heads": {"treebank": str(treebank), "figures": "false"}}
    ids = {
        corpus: cell_id(
            tiny_bert,
            tmp_path,
            tasks=["dep_heads"],
            task_args=dep_heads,
            model_args={"reference_corpus": str(corpus)},
        )
        for corpus in (tmp_path / "corpus.txt", other)
    }
    assert len(set(ids.values())) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"output_dir": "elsewhere"},
        {"cache_dir": "cache"},
        {"device": "auto"},  # resolves to cpu here
    ],
)
def test_inputs_outside_the_identity_leave_the_result_unchanged(tiny_bert, tmp_path, change):
    base = config(tiny_bert, tmp_path)
    (first,) = run(base)
    overrides = {
        key: (tmp_path / value if key.endswith("_dir") else value) for key, value in change.items()
    }
    (second,) = run(config(tiny_bert, tmp_path, **overrides, overwrite=True))
    assert second.cell.cell_id == first.cell.cell_id
    assert second.result.metrics == first.result.metrics
    assert second.result.details == first.result.details


def test_train_limit_task_version_and_data_content_change_the_cell_id(
    tiny_bert, tmp_path, monkeypatch
):
    """The inputs the first test cannot vary on a synthetic task: the training cut, the
    task's code version and the bytes of a dataset it reads."""
    import dataclasses

    from posharness.plugins import tasks as task_registry
    from tests.unit.tasks.dep_heads.test_dep_heads_task import write_treebank

    def dep_heads_id(treebank: Path, **overrides) -> str:
        options = {"dep_heads": {"treebank": str(treebank), "figures": "false"}}
        return cell_id(tiny_bert, tmp_path, tasks=["dep_heads"], task_args=options, **overrides)

    treebank = write_treebank(tmp_path / "trees.conllu", sentences=4)
    base = dep_heads_id(treebank)
    assert dep_heads_id(treebank) == base  # planning is deterministic
    ids = {"train limit": dep_heads_id(treebank, train_limit=5)}
    write_treebank(treebank, sentences=5)  # same path, other bytes
    ids["data content"] = dep_heads_id(treebank)
    write_treebank(treebank, sentences=4)
    task_class = task_registry.get("dep_heads")
    newer = dataclasses.replace(task_class.spec, version=task_class.spec.version + "-next")
    monkeypatch.setattr(task_class, "spec", newer)
    ids["task version"] = dep_heads_id(treebank)
    for name, identity in ids.items():
        assert identity != base, f"changing the {name} left the cell id unchanged"
    assert len(set(ids.values())) == len(ids), "two different inputs share a cell id"
