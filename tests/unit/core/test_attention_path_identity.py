"""The attention path is part of what a result depends on (issue 20, part 4).

Fused SDPA and eager attention agree to float tolerance, not to the byte, so a cell or a
cached fine-tuning run computed through one is never taken for the other; each result
says which ran, and a forced path that cannot be honoured fails at planning, before any
weights load.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posharness.base.errors import OptionError
from posharness.run.config import RunConfig
from posharness.run.plan import plan
from tests.unit.tasks.finetune.test_finetune_task import write_rte

FAST_GEOMETRY = {"length": "16", "words": "6", "bootstrap": "10", "figures": "false"}


def config(tiny_bert: Path, tmp_path: Path, task: str, attention: str | None) -> RunConfig:
    task_args = {"rte": {"epochs": "1", "bootstrap": "20"}, "locality_symmetry": FAST_GEOMETRY}
    return RunConfig(
        models=[f"hf:{tiny_bert}"],
        tasks=[task],
        output_dir=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        device="cpu",
        data_dir=tmp_path / "data",
        task_args={task: task_args[task]},
        model_args={} if attention is None else {"attention": attention},
    )


def only_cell(tiny_bert: Path, tmp_path: Path, task: str, attention: str | None):
    (tmp_path / "data").mkdir(exist_ok=True)
    (cell,) = plan(config(tiny_bert, tmp_path, task, attention), "cpu")
    return cell


def test_a_weight_free_cell_runs_fused_by_default_and_is_keyed_apart_from_eager(
    tiny_bert: Path, tmp_path: Path
) -> None:
    write_rte(tmp_path / "data")
    auto = only_cell(tiny_bert, tmp_path, "rte", None)
    eager = only_cell(tiny_bert, tmp_path, "rte", "eager")
    forced = only_cell(tiny_bert, tmp_path, "rte", "sdpa")
    assert (auto.attention_path, eager.attention_path, forced.attention_path) == (
        "sdpa",
        "eager",
        "sdpa",
    )
    assert auto.cell_id != eager.cell_id
    assert auto.cell_id == forced.cell_id  # the same code runs: the same result
    assert auto.path.parent != eager.path.parent  # another --model-arg, another folder


def test_a_cell_that_reads_weights_runs_eager_and_keeps_its_earlier_id(
    tiny_bert: Path, tmp_path: Path
) -> None:
    """Eager adds nothing to the identity, so results computed before SDPA stay valid."""
    auto = only_cell(tiny_bert, tmp_path, "locality_symmetry", None)
    eager = only_cell(tiny_bert, tmp_path, "locality_symmetry", "eager")
    assert auto.attention_path == eager.attention_path == "eager"
    assert auto.cell_id == eager.cell_id


def test_sdpa_forced_on_a_task_that_reads_weights_fails_at_planning(
    tiny_bert: Path, tmp_path: Path
) -> None:
    (tmp_path / "data").mkdir()
    with pytest.raises(OptionError, match="attention=sdpa cannot return attention weights"):
        plan(config(tiny_bert, tmp_path, "locality_symmetry", "sdpa"), "cpu")


def test_an_unknown_choice_is_one_line_naming_the_choices(tiny_bert: Path, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with pytest.raises(OptionError, match="pick one of auto, eager, sdpa"):
        plan(config(tiny_bert, tmp_path, "locality_symmetry", "flash"), "cpu")


def test_the_result_records_the_path_and_a_cached_eager_run_is_not_reused(
    tiny_bert: Path, tmp_path: Path
) -> None:
    from posharness.run.runner import run

    write_rte(tmp_path / "data")
    (eager,) = run(config(tiny_bert, tmp_path, "rte", "eager"))
    (fused,) = run(config(tiny_bert, tmp_path, "rte", None))
    assert eager.result.mode.attention_path == "eager"
    assert fused.result.mode.attention_path == "sdpa"
    written = json.loads(fused.cell.path.read_text())
    assert written["mode"]["attention_path"] == "sdpa"
    # one cache, two paths: the fused cell trained its own run instead of reading eager's
    assert fused.result.task.settings["runs_trained_now"] == 1
    accuracy = (eager.result.metrics["accuracy"], fused.result.metrics["accuracy"])
    assert accuracy[0].value == pytest.approx(accuracy[1].value, abs=1 / 12 + 1e-9)


@pytest.mark.parametrize(("attention", "expected"), [(None, "sdpa"), ("eager", "eager")])
def test_a_zoo_model_takes_the_choice_too(
    tmp_path: Path, attention: str | None, expected: str
) -> None:
    from posharness.contracts.adapter import Mode
    from posharness.contracts.model_spec import LoadOptions, parse_model_spec
    from posharness.run.plan import build_adapter

    args = {"init": "random", "size": "tiny"}
    if attention is not None:
        args["attention"] = attention
    options = LoadOptions(device="cpu", cache_dir=tmp_path, model_args=tuple(sorted(args.items())))
    model = build_adapter(parse_model_spec("tupe-r"), options)
    assert model.attention_path(Mode.POSITIONAL, frozenset()) == expected
    assert model.attention_path(Mode.BOTH, frozenset({"attentions"})) == "eager"
