"""Per-example outputs are typed: an id is required where they are written and where
they are read, values travel as extras, and the on-disk record is flat."""

from __future__ import annotations

import json

import pytest

from posharness.base.errors import DataError, TaskOutputError
from posharness.boards.compare import outputs_of_bundle_entry
from posharness.contracts.examples import Example, as_examples, read_example


def test_a_record_round_trips_flat_with_its_extras():
    example = Example(id="dev:3", split="dev", prefix="dev_", label=1, prediction=0, dev_f1=0.0)
    record = example.record()
    assert record == {
        "id": "dev:3", "split": "dev", "prefix": "dev_", "label": 1, "prediction": 0, "dev_f1": 0.0
    }  # fmt: skip
    again = read_example(json.loads(json.dumps(record)), "here")
    assert again == example and again.value("dev_f1") == 0.0 and again.value("score") is None
    assert again.has("label") and not again.has("score")


def test_integer_ids_become_text_so_both_sides_pair():
    assert as_examples("t", [{"id": 7, "accuracy": 1.0}])[0].id == "7"


@pytest.mark.parametrize("record", [{"accuracy": 1.0}, {"id": ""}, {"id": None}, {"id": 1.5}])
def test_a_task_output_without_a_usable_id_is_refused_when_written(record):
    with pytest.raises(TaskOutputError, match=r"task 'mine' returned per-example output 1 "):
        as_examples("mine", [{"id": "a"}, record])


def test_a_stored_record_without_an_id_is_damage_not_a_silent_drop():
    with pytest.raises(DataError, match="examples bundle: a per-example output without"):
        outputs_of_bundle_entry({"examples": [{"id": "a", "acc": 1.0}, {"acc": 0.0}]})


def test_the_runner_refuses_a_plugin_task_whose_examples_lack_ids(tmp_path, tiny_bert):
    from click.testing import CliRunner

    from posharness.cli import cli

    plugin = tmp_path / "no_ids.py"
    plugin.write_text(
        "from posharness import register_task, TaskSpec, TaskResult, Metric\n"
        "@register_task('no_ids')\n"
        "class NoIds:\n"
        "    spec = TaskSpec(name='no_ids', version='1', kind='demo',\n"
        "                    description='examples without ids', main_metric='acc')\n"
        "    def run(self, model, ctx):\n"
        "        return TaskResult({'acc': Metric(1.0, n=2)}, 'x', examples=[{'acc': 1.0}])\n"
    )
    out = tmp_path / "results"
    result = CliRunner().invoke(
        cli,
        ["run", "--include", str(plugin), "--model", f"hf:{tiny_bert}", "--tasks", "no_ids",
         "--device", "cpu", "--output-dir", str(out), "--no-cache"],
    )  # fmt: skip
    assert isinstance(result.exception, TaskOutputError)  # main() prints it in one line
    assert "task 'no_ids' returned per-example output 0 without a usable 'id'" in str(
        result.exception
    )
    assert not list(out.rglob("no_ids*.json"))  # no half-written result
