"""The worked example of docs/contributing/add-a-task.md runs as the page says.

The guide's code block is cut out of the markdown and written to a folder outside the
repository, then driven through the command line in fresh interpreters, exactly as an
outside contributor would: listed as an ``--include`` plugin, run on two tiny random BERTs
(no download), and compared, where its declared metric types choose the paired tests.
A guide whose example stops working fails here, not in a newcomer's hands.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.cli_helpers import posharness_cli
from tests.conftest import write_tiny_bert

REPO = Path(__file__).resolve().parents[3]
GUIDE = REPO / "docs" / "contributing" / "add-a-task.md"
TASK = "neighbour_attention"
MAX_LINES = 40  # the promise: a whole task in at most 40 lines
TIMEOUT = 240


def guide_plugin() -> str:
    """The python block that follows the guide's ``<!-- tested: ... -->`` marker."""
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(r"<!-- tested:[^>]*-->\s*```python\n(.*?)```", text, re.DOTALL)
    assert found, f"{GUIDE}: no ```python block after a '<!-- tested: -->' marker"
    return found.group(1)


def posharness(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = posharness_cli(*args, cwd=cwd, timeout=TIMEOUT)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_guide_example_fits_in_forty_lines() -> None:
    code = guide_plugin()
    assert len(code.splitlines()) <= MAX_LINES
    assert "from posharness.plugins import register_task" in code


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("outside-plugin")
    assert REPO not in folder.resolve().parents, "the plugin must live outside the repo"
    path = folder / f"{TASK}.py"
    path.write_text(guide_plugin(), encoding="utf-8")
    return path


def test_guide_task_is_listed_as_an_include_plugin(plugin: Path, tmp_path: Path) -> None:
    proc = posharness("list", "tasks", "--format", "json", "--include", plugin, cwd=tmp_path)

    rows = {row["name"]: row for row in json.loads(proc.stdout)}
    assert rows[TASK]["origin"] == "include"
    assert rows[TASK]["main_metric"] == "neighbour_mass"
    assert rows["toeplitz"]["origin"] == "built-in"


def board_of(plugin: Path, checkpoint: Path, out: Path, cwd: Path) -> Path:
    """``posharness run`` of the guide's task on one checkpoint; the board it wrote."""
    posharness(
        "run", "--include", plugin, "--model", f"hf:{checkpoint}", "--tasks", TASK,
        "--device", "cpu", "--output-dir", out, "--cache-dir", cwd / "cache",
        "--leaderboard", out / "board.json",
        cwd=cwd,
    )  # fmt: skip
    return out / "board.json"


def test_guide_task_runs_writes_examples_and_is_compared_by_its_types(
    plugin: Path, tiny_bert: Path, tmp_path: Path
) -> None:
    board_a = board_of(plugin, tiny_bert, tmp_path / "a", tmp_path)

    results = [
        (path, json.loads(path.read_text()))
        for path in (tmp_path / "a").rglob("*.json")
        if path.name != "board.json"
    ]
    ((path, result),) = [(p, r) for p, r in results if r.get("task", {}).get("name") == TASK]
    assert result["mode"]["name"] == "both"
    metrics = result["metrics"]
    assert 0.0 < metrics["neighbour_mass"]["value"] < 1.0
    assert metrics["neighbour_mass"]["n"] == 3
    examples = [
        json.loads(line)
        for line in (path.parent / result["examples_file"]).read_text().splitlines()
    ]
    assert sorted(example["id"] for example in examples) == ["s0", "s1", "s2"]
    assert {example["leans_left"] for example in examples} <= {0, 1}
    mean = sum(example["neighbour_mass"] for example in examples) / len(examples)
    assert mean == pytest.approx(metrics["neighbour_mass"]["value"])

    other = write_tiny_bert(tmp_path / "other-bert", seed=1)
    board_b = board_of(plugin, other, tmp_path / "b", tmp_path)
    proc = posharness(
        "compare", board_a, board_b, "--all-metrics", "--format", "json",
        "--include", plugin,
        cwd=tmp_path,
    )  # fmt: skip

    tests = {row["metric"]: row["test"] for row in json.loads(proc.stdout)["comparisons"]}
    assert tests == {"neighbour_mass": "paired-permutation", "leans_left": "mcnemar-exact"}
