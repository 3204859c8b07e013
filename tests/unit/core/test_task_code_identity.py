"""A plugin task's code is part of its cells' identity (issue 29, part 4): editing its code
makes new cells, editing a comment or docstring does not, a declared ``code_version``
holds the id until it changes, and built-in tasks' ids are what they were."""

from __future__ import annotations

import uuid
from pathlib import Path

from posharness.plugins import include_paths
from posharness.plugins import tasks as task_registry
from posharness.run.identity import task_code_identity
from posharness.run.runner import run
from tests.unit.core.test_cell_identity import cell_id, config

PLUGIN = '''"""A plugin task: the mean of a scaled constant."""

from posharness import Metric, TaskResult, TaskSpec, register_task

SCALE = 2.0


@register_task("@@NAME@@")
class Scaled:
    """Reports SCALE."""

    spec = TaskSpec(name="@@NAME@@", version="1", kind="demo",
                    description="a scaled constant", main_metric="value")

    def run(self, model, ctx):
        # the plugin's one line of science
        value = 1.0 * SCALE
        return TaskResult({"value": Metric(value, n=1)}, "value",
                          examples=[{"id": "0", "value": value}])
'''


def plugin_task(tmp_path: Path) -> tuple[str, Path]:
    name = f"scaled_{uuid.uuid4().hex[:8]}"
    file = tmp_path / "plugin_task.py"
    file.write_text(PLUGIN.replace("@@NAME@@", name))
    include_paths([file])
    return name, file


def test_a_plugin_tasks_code_edit_changes_the_cell_id_and_a_comment_edit_does_not(
    tiny_bert, tmp_path, monkeypatch
):
    name, file = plugin_task(tmp_path)

    def plugin_id() -> str:
        return cell_id(tiny_bert, tmp_path, tasks=[name], task_args={}, model_args={})

    base = plugin_id()
    text = file.read_text()
    file.write_text(
        text.replace("# the plugin's one line of science", "# a comment, reworded")
        .replace('"""Reports SCALE."""', '"""Reports SCALE, documented at length."""')
        .replace("SCALE = 2.0", "SCALE = (\n    2.0\n)")
    )
    assert plugin_id() == base, "a comment, docstring or formatting edit made a new cell"
    file.write_text(text.replace("1.0 * SCALE", "-100.0 * SCALE"))
    edited = plugin_id()
    assert edited != base, "editing the plugin's code kept its old cell id"

    # A declared code version is the identity: code edits keep the id until it changes.
    task_class = task_registry.get(name)
    monkeypatch.setattr(task_class, "code_version", "1", raising=False)
    versioned = plugin_id()
    assert versioned not in (base, edited)
    file.write_text(text)
    assert plugin_id() == versioned
    monkeypatch.setattr(task_class, "code_version", "2")
    assert plugin_id() != versioned


def test_built_in_tasks_add_no_code_identity(tmp_path):
    """Committed boards keep their ids: a built-in task adds nothing to its identity; an
    included one adds the hash of its file."""
    for builtin in ("locality_symmetry", "dep_heads", "sst2", "shuffle_sr", "bshift"):
        assert task_code_identity(task_registry.get(builtin)()) is None, builtin
    name, file = plugin_task(tmp_path)
    found = task_code_identity(task_registry.get(name)())
    assert found is not None and found.startswith("src:") and len(found) == 20


def test_a_rerun_after_a_code_edit_recomputes_the_cell(tiny_bert, tmp_path):
    """The issue's stale-number case for tasks: the same folder after an edit of the
    plugin's code runs the cell again instead of saying it is already finished."""
    name, file = plugin_task(tmp_path)
    settings = dict(tasks=[name], task_args={}, model_args={})
    (first,) = run(config(tiny_bert, tmp_path, **settings))
    (again,) = run(config(tiny_bert, tmp_path, **settings))
    assert not first.skipped and again.skipped
    file.write_text(file.read_text().replace("1.0 * SCALE", "-100.0 * SCALE"))
    (edited,) = run(config(tiny_bert, tmp_path, **settings))
    assert not edited.skipped, "the edited plugin's cell was reported already finished"
    assert edited.cell.cell_id != first.cell.cell_id
