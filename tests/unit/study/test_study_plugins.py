"""Plugins travel with a study (issue 39, part 5): the folder records the plugin files
(with their SHA-256) and distributions its models and tasks came from, a rerun in a new
process loads them without ``--include``, a changed file is said in one line, and a study
file can name its plugins itself (``[study] include``).

A new process is simulated in-process: the registries, the ``--include`` list and the
imported plugin modules go back to what they were before the plugin was first loaded, so
its model name is unknown again until something loads it.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from posharness.base.errors import StudyFileError
from posharness.study.plugins import PLUGINS_FILE, include_line, load_study_plugins
from posharness.study.workflow import plan_study, run_study, study_status
from tests.plugin_sources import scaled_bias
from tests.unit.study.conftest import write_study

STUDY = """
[study]
name = "plugin-study"
@@INCLUDE@@
[[model]]
name = "@@NAME@@"
label = "Mine"
seeds = []

[run]
tasks = ["locality_symmetry"]
modes = ["positional"]
device = "cpu"
limit = 4
no_cache = true
model_args = { init = "random", size = "tiny" }

[run.task_args.locality_symmetry]
words = "4"
length = "16"
bootstrap = "0"
paired_replicates = "0"
figures = "false"
"""


def _quiet(line: str) -> None:
    pass


@pytest.fixture
def restart(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Calling it puts the plugin registries back to this test's start: a new process."""
    from posharness import plugins

    registries = (plugins.models, plugins.tasks, plugins.positional_encodings, plugins.pe_variants)
    for registry in registries:
        registry.names()  # installed plugins loaded first, as in any process
    start = {r: (dict(r._entries), dict(r._aliases)) for r in registries}  # noqa: SLF001
    modules = set(sys.modules)

    def fresh() -> None:
        for registry, (entries, aliases) in start.items():
            monkeypatch.setattr(registry, "_entries", dict(entries))
            monkeypatch.setattr(registry, "_aliases", dict(aliases))
        monkeypatch.setattr(plugins, "INCLUDED", [])
        for name in set(sys.modules) - modules:
            if name.startswith("posharness_include_"):
                monkeypatch.delitem(sys.modules, name)

    fresh()
    return fresh


def _plugin_study(tmp_path: Path, include_key: bool = False) -> tuple[str, Path, Path]:
    name = f"t-travel-{uuid.uuid4().hex[:8]}"
    plugin = tmp_path / "plugins" / "scaled_bias.py"
    plugin.parent.mkdir()
    plugin.write_text(scaled_bias(name))
    include = 'include = ["plugins/scaled_bias.py"]\n' if include_key else ""
    text = STUDY.replace("@@NAME@@", name).replace("@@INCLUDE@@", include)
    return name, plugin, write_study(tmp_path, text)


def test_a_rerun_in_a_new_process_loads_the_recorded_plugin_and_says_it_changed(
    tmp_path: Path, restart: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    from posharness.plugins import include_paths
    from posharness.study import publish

    # the HTML report (seconds of figures) is no part of what a plugin changes
    monkeypatch.setattr(publish, "_report", lambda study, folder, *rest: folder.report)
    name, plugin, study = _plugin_study(tmp_path)
    include_paths([plugin])  # the first run's --include
    run_study(study, _quiet)
    record = json.loads((tmp_path / "study" / PLUGINS_FILE).read_text())
    assert [item["path"] for item in record["include"]] == ["plugins/scaled_bias.py"]
    assert len(record["include"][0]["sha256"]) == 64 and record["distributions"] == []

    restart()
    plugin.write_text(plugin.read_text().replace("SCALE = 1.0", "SCALE = 2.0"))
    planned = plan_study(study)  # no --include: the folder's record loads it

    assert [m.spec for m in planned.study.models] == [name]
    (note,) = planned.study.plugins.notes
    assert note.startswith("plugin file plugins/scaled_bias.py changed since this study last")
    states = {stage: state for stage, state, _ in study_status(study)}
    assert states == {"evaluate/Mine": "pending"}  # its cell is recomputed with the new code


def test_the_study_file_names_its_plugins_and_a_missing_one_is_its_line(
    tmp_path: Path, restart: Callable[[], None]
) -> None:
    name, plugin, study = _plugin_study(tmp_path, include_key=True)

    planned = plan_study(study)  # nothing included by hand

    assert [m.spec for m in planned.study.models] == [name]
    assert planned.study.plugins.notes == ()
    restart()
    plugin.unlink()
    with pytest.raises(StudyFileError) as caught:
        plan_study(study)
    message = str(caught.value)
    assert message.startswith(f"{study} line 3: [study] include:")
    assert "no such file" in message and "\n" not in message


def test_an_unknown_model_names_the_recorded_plugin_that_is_gone(
    tmp_path: Path, restart: Callable[[], None]
) -> None:
    name, plugin, study = _plugin_study(tmp_path)
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / PLUGINS_FILE).write_text(
        json.dumps({"include": [{"path": "plugins/scaled_bias.py", "sha256": "0" * 64}]})
    )
    plugin.unlink()

    with pytest.raises(StudyFileError) as caught:
        plan_study(study)

    message = str(caught.value)
    assert f"unknown model {name!r}" in message
    assert "this study last ran with plugin file plugins/scaled_bias.py (missing now" in message


def test_without_any_record_an_unknown_model_says_how_to_name_a_plugin(tmp_path: Path) -> None:
    study = write_study(
        tmp_path, STUDY.replace("@@NAME@@", "no-such-pe").replace("@@INCLUDE@@", "")
    )

    with pytest.raises(StudyFileError) as caught:
        plan_study(study)

    assert 'list its file in [study] include = ["FILE.py"]' in str(caught.value)


def test_recorded_distributions_are_checked_for_presence_and_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    (tmp_path / PLUGINS_FILE).write_text(
        json.dumps(
            {
                "distributions": [
                    {"name": "pytest", "version": "0.0.1"},
                    {"name": "posharness-no-such-plugin", "version": "1.2"},
                ]
            }
        )
    )

    found = load_study_plugins([], tmp_path, tmp_path)

    assert found.notes == (
        f"plugin distribution pytest is at {version('pytest')}, this study last ran with "
        "0.0.1: cells of the models whose code changed are recomputed",
    )
    assert found.gone == (
        "plugin distribution posharness-no-such-plugin 1.2 (not installed: pip install "
        "posharness-no-such-plugin)",
    )


def test_include_line_names_this_process_includes_relative_to_the_study_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from posharness import plugins

    monkeypatch.setattr(plugins, "INCLUDED", [str(tmp_path / "pes" / "fire.py")])
    assert include_line(tmp_path / "study.toml") == 'include = ["pes/fire.py"]'
    monkeypatch.setattr(plugins, "INCLUDED", [])
    assert include_line(tmp_path / "study.toml") is None
