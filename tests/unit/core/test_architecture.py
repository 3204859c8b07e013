"""The layout holds: every package installs, every family registers what it declares, and
the core imports no family (an import-linter contract run on the installed layout)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGE_DIRS = PYPROJECT["tool"]["setuptools"]["package-dir"]  # import name -> folder


def _packages_on_disk() -> set[str]:
    found = set()
    for name, folder in PACKAGE_DIRS.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            parts = init.parent.relative_to(base).parts
            found.add(".".join((name, *parts)))
    return found


def test_every_package_folder_is_listed_for_installation():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    missing = _packages_on_disk() - listed
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    data_only = set(PYPROJECT["tool"]["setuptools"]["package-data"])  # folders of data files
    assert not listed - _packages_on_disk() - data_only, "pyproject.toml lists missing packages"


def test_every_family_has_one_entry_point_and_it_is_a_package():
    entry_points = PYPROJECT["project"]["entry-points"]
    for group in ("posharness.models", "posharness.tasks"):
        for name, target in entry_points[group].items():
            assert ":" not in target, f"{group} {name}: a family registers from its __init__"
            assert target in _packages_on_disk(), f"{group} {name}: {target} is not a package"


def test_registered_tasks_are_exactly_what_the_families_declare():
    from posharness.plugins import tasks
    from posharness.tasks.controlled.task import NAME as CONTROLLED
    from posharness.tasks.dep_heads import TASKS as DEP_HEADS
    from posharness.tasks.finetune.profiles import GROUPS as FINETUNE_GROUPS
    from posharness.tasks.finetune.profiles import PROFILES
    from posharness.tasks.geometry import GROUPS as GEOMETRY_GROUPS
    from posharness.tasks.geometry import TASKS as GEOMETRY
    from posharness.tasks.length import TASKS as LENGTH
    from posharness.tasks.senteval.catalog import GROUP as SENTEVAL_GROUP
    from posharness.tasks.senteval.catalog import TASKS as SENTEVAL
    from posharness.tasks.shuffle import GROUPS as SHUFFLE_GROUPS
    from posharness.tasks.shuffle.probes import PROBES

    probing = [t.name for t in SENTEVAL]
    declared = {*GEOMETRY, *DEP_HEADS, *PROFILES, *PROBES, *probing, *LENGTH, CONTROLLED}
    builtin = {e.name for e in tasks.entries() if e.origin == "built-in"}
    assert builtin == declared
    groups = {
        **GEOMETRY_GROUPS,
        **FINETUNE_GROUPS,
        **SHUFFLE_GROUPS,
        SENTEVAL_GROUP: probing,
    }
    assert {g: tuple(m) for g, m in tasks.groups().items() if g in groups} == {
        g: tuple(m) for g, m in groups.items()
    }
    for name in declared:  # every name resolves to a task that knows its own name
        assert tasks.get(name)().spec.name == name


def test_registered_models_resolve_to_declared_entries():
    from posharness.contracts.model_spec import ModelEntry
    from posharness.pe import variants
    from posharness.plugins import models

    builtin = {e.name: e.obj for e in models.entries() if e.origin == "built-in"}
    zoo = {name for name in variants() if name in builtin}
    assert len(zoo) == 26
    assert set(builtin) == {"hf", "minilm", *zoo}
    assert all(isinstance(entry, ModelEntry) for entry in builtin.values())


def test_family_commands_are_on_the_command_line():
    from click.testing import CliRunner

    from posharness.cli import cli

    runner = CliRunner()
    listed = runner.invoke(cli, ["--help"]).output
    for command in ("pretrain", "loss-curves", "build-probes", "run", "compare"):
        assert command in listed
    assert "shuffle" in runner.invoke(cli, ["build-probes", "--help"]).output
    assert "--corpus" in runner.invoke(cli, ["pretrain", "--help"]).output


def _installed_layout(target: Path) -> Path:
    """The three folders assembled as ``pip install`` lays them out: one ``posharness``."""
    for name, folder in sorted(PACKAGE_DIRS.items(), key=lambda item: item[0].count(".")):
        destination = target.joinpath(*name.split("."))
        shutil.copytree(
            ROOT / folder, destination, ignore=shutil.ignore_patterns("__pycache__"),
            dirs_exist_ok=True,
        )  # fmt: skip
    return target


def _core_modules() -> set[str]:
    core = ROOT / PACKAGE_DIRS["posharness"]
    modules = {f"posharness.{p.stem}" for p in core.glob("*.py") if p.stem != "__init__"}
    return modules | {f"posharness.{p.parent.name}" for p in core.glob("*/__init__.py")}


def _contract(kind: str) -> dict:
    return next(c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["type"] == kind)


def test_the_import_contracts_cover_every_core_module():
    missing = _core_modules() - set(_contract("forbidden")["source_modules"])
    assert not missing, f"add to the import-linter contract in pyproject.toml: {sorted(missing)}"
    layered = {m.strip() for layer in _contract("layers")["layers"] for m in layer.split("|")}
    top_level = {"posharness.__main__"}
    unlayered = _core_modules() - layered - top_level
    assert not unlayered, f"put in a layer of the import-linter contract: {sorted(unlayered)}"


def test_the_core_shows_its_layers():
    """Sub-packages carry the architecture: only the entry points stay directly in harness/."""
    flat = sorted(p.name for p in (ROOT / PACKAGE_DIRS["posharness"]).glob("*.py"))
    assert len(flat) <= 8, flat
    too_long = {
        str(p.relative_to(ROOT)): n
        for p in (ROOT / PACKAGE_DIRS["posharness"]).rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 400
    }
    assert not too_long, f"split these core modules (over 400 lines): {too_long}"


@pytest.mark.skipif(shutil.which("lint-imports") is None, reason="import-linter not installed")
def test_the_core_imports_no_family_and_keeps_its_layers(tmp_path):
    layout = _installed_layout(tmp_path / "site")
    proc = subprocess.run(
        [shutil.which("lint-imports") or "lint-imports", str(ROOT / "pyproject.toml")],
        cwd=tmp_path,
        env={"PYTHONPATH": str(layout), "PATH": str(Path(sys.executable).parent)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    kept = len(PYPROJECT["tool"]["importlinter"]["contracts"])
    assert f"{kept} kept, 0 broken" in proc.stdout
