"""A checkpoint made with a plugin's scheme names the plugin in every form of spec that
loads it (issue 39, part 5), and the help lists how a plugin PE is declared and loaded.

Before, ``fire@RUN/final`` named the file to include while ``fire@RUN`` (the run folder,
which the zoo also loads) and a bare ``fire`` found under the runs root said only
``unknown model 'fire': did you mean rope?``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posharness.contracts.checkpoint_folder import missing_plugin_message
from tests.cli_helpers import cli

ORIGIN = {
    "origin": "the file",
    "source": "fire.py",
    "code": "src:0123456789abcdef",
    "fix": "pass --include fire.py",
}


def checkpoint(folder: Path, origin: dict[str, str] | None = ORIGIN) -> Path:
    folder.mkdir(parents=True)
    config = {"name": "fire", "scheme": "fire"} | ({"pe_origin": origin} if origin else {})
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize("form", ["", "/final", "/checkpoint-2"])
def test_every_folder_form_of_a_spec_names_the_plugin_to_include(tmp_path: Path, form: str) -> None:
    run = tmp_path / "runs" / "fire-tiny"
    checkpoint(run / "checkpoint-2")
    checkpoint(run / "final")

    message = missing_plugin_message("fire", f"{run}{form}")

    shown = run / (form.lstrip("/") or "final")
    assert message == (
        f"unknown model 'fire': {shown} was made with a positional scheme from the file "
        "fire.py: pass --include fire.py"
    )


def test_a_bare_name_finds_its_newest_run_under_the_runs_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSHARNESS_RUNS", str(tmp_path / "runs"))
    checkpoint(tmp_path / "runs" / "fire-tiny" / "final")

    message = missing_plugin_message("fire", None)

    assert message is not None and message.endswith("from the file fire.py: pass --include fire.py")
    assert missing_plugin_message("other", None) is None


def test_a_checkpoint_that_records_no_plugin_adds_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    checkpoint(run / "final", origin=None)
    assert missing_plugin_message("fire", str(run)) is None
    assert missing_plugin_message("fire", str(tmp_path / "absent")) is None


def test_the_help_says_how_a_pe_is_declared_and_loaded(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("--help") == 0
    top = " ".join(capsys.readouterr().out.split())
    assert "@register_pe" in top and "--include FILE.py" in top and "docs/new_pe.md" in top
    assert cli("run", "--help") == 0
    run = " ".join(capsys.readouterr().out.split())
    assert "--include PATH A .py file or folder of plugins to import first: its @register_pe" in run


def test_the_model_factory_raises_that_line_for_a_run_folder_spec(tmp_path: Path) -> None:
    """registered_factory is where every loading path meets: ``fire@RUN_FOLDER`` there."""
    from posharness.base.errors import UnknownNameError
    from posharness.contracts.model_spec import parse_model_spec, registered_factory

    run = tmp_path / "runs" / "fire-tiny"
    checkpoint(run / "final")
    with pytest.raises(UnknownNameError) as caught:
        registered_factory(parse_model_spec(f"fire@{run}"))
    assert str(caught.value).endswith("fire.py: pass --include fire.py")
    with pytest.raises(UnknownNameError, match="unknown model"):
        registered_factory(parse_model_spec("fire@" + str(tmp_path / "nothing")))
