"""A plugin PE's code is part of every cell's identity, and its checkpoints name the plugin.

Issue 29's stale numbers: after an edit of a plugin's bias, the same folder said "already
finished" and a new folder with the same cache mixed old attention metrics with a new
positional term. Each run here is a fresh interpreter, as a researcher's would be.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import posharness_cli
from tests.plugin_sources import scaled_bias

PLUGIN = scaled_bias("t-scaled-bias")


def run(tmp_path: Path, plugin: Path, *extra: str, model: str = "t-scaled-bias"):
    return posharness_cli(
        "run", "--include", plugin, "--model", model, "--model-arg", "init=random",
        "--model-arg", "size=tiny", "--tasks", "locality_symmetry",
        "--task-arg", "locality_symmetry.words=4", "--task-arg", "locality_symmetry.length=24",
        "--task-arg", "locality_symmetry.bootstrap=0", "--mode", "both,positional",
        "--device", "cpu", "--data-dir", tmp_path / "data", "--output-dir", tmp_path / "results",
        "--cache-dir", tmp_path / "cache", "--leaderboard", tmp_path / "board.json", *extra,
        cwd=tmp_path,
    )  # fmt: skip


def results(tmp_path: Path) -> dict[str, dict]:
    """Result files by name: cell id and metrics."""
    found = {}
    for path in sorted((tmp_path / "results").rglob("*.json")):
        data = json.loads(path.read_text())
        if "metrics" in data:
            found[path.name] = data
    return found


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    path = tmp_path / "scaled_bias.py"
    path.write_text(PLUGIN)
    return path


def test_editing_a_plugin_scheme_recomputes_and_a_comment_does_not(
    tmp_path: Path, plugin: Path
) -> None:
    first = run(tmp_path, plugin)
    assert first.returncode == 0, first.stderr
    before = results(tmp_path)
    assert len(before) == 2

    plugin.write_text(PLUGIN.replace("SCALE = 1.0", "SCALE = -100.0"))
    second = run(tmp_path, plugin)
    assert second.returncode == 0, second.stderr
    assert ", 0 already finished" in second.stdout + second.stderr
    after = results(tmp_path)
    assert sorted(after) == sorted(before)  # the same spec's files, recomputed in place
    for name, data in after.items():
        assert data["cell_id"] != before[name]["cell_id"]
        assert data["model"]["fingerprint"] != before[name]["model"]["fingerprint"]
    positional = next(name for name, data in after.items() if data["mode"]["name"] == "positional")
    for metric in ("positional_term_symmetry", "symmetry"):  # no cached attention reused
        assert after[positional]["metrics"][metric] != before[positional]["metrics"][metric]

    plugin.write_text(
        PLUGIN.replace("SCALE = 1.0", "SCALE = -100.0  # a comment").replace(
            "A learned bias per head", "A docstring edit: a learned bias per head"
        )
    )
    third = run(tmp_path, plugin)
    assert third.returncode == 0, third.stderr
    assert "0 cell(s) run, 2 already finished" in third.stdout + third.stderr
    assert {n: d["cell_id"] for n, d in results(tmp_path).items()} == {
        n: d["cell_id"] for n, d in after.items()
    }


def test_a_plugin_checkpoint_loaded_without_its_plugin_names_it(
    tmp_path: Path, plugin: Path
) -> None:
    made = run(tmp_path, plugin)
    assert made.returncode == 0, made.stderr
    folders = list((tmp_path / "cache" / "pe-init").glob("t-scaled-bias-tiny-*"))
    assert len(folders) == 1
    config = json.loads((folders[0] / "config.json").read_text())
    origin = config["pe_origin"]
    assert origin.pop("code").startswith("src:")  # the plugin's source hash
    assert origin == {
        "origin": "the file",
        "source": "scaled_bias.py",
        "fix": "pass --include scaled_bias.py",
    }
    result = next(iter(results(tmp_path).values()))
    assert result["model"]["details"]["pe_origin"]["source"] == "scaled_bias.py"

    for spec in (f"t-scaled-bias@{folders[0]}", f"hf:{folders[0]}"):
        proc = posharness_cli(
            "run", "--model", spec, "--tasks", "locality_symmetry", "--device", "cpu",
            "--data-dir", tmp_path / "data", "--output-dir", tmp_path / "other", cwd=tmp_path,
        )  # fmt: skip
        assert proc.returncode == 2
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert "scaled_bias.py" in lines[0] and "--include scaled_bias.py" in lines[0]
