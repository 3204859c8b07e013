"""A plugin PE (docs/new_pe.md's example, loaded with --include) goes through `reproduce`
and `study run` like a built-in one, with no code of its own."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PLUGIN = Path(__file__).resolve().parents[3] / "examples" / "pe_plugin" / "posharness_pe_examples"


def _posharness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "posharness", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_a_plugin_pe_is_pretrained_and_tabled_beside_the_baselines(
    tmp_path: Path, corpus: Path
) -> None:
    include = ("--include", str(PLUGIN / "clipped_bias.py"))
    written = _posharness(
        "reproduce", "tisa2021", "--pe", "clipped-bias", "--corpus", str(corpus),
        "--write-only", *include, cwd=tmp_path,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    study = tmp_path / "tisa2021-mini.toml"
    text = study.read_text()
    assert 'name = "clipped-bias"' in text and 'baselines = ["BERT-A"]' in text
    # A user's edit for a quick look: the plugin beside BERT-A only, two steps, short probes.
    for label, name in (("TISA", "tisa"), ("TISA+APE", "tisa-ape")):
        text = text.replace(f'[[model]]\nname = "{name}"\nlabel = "{label}"\n\n', "")
    text = re.sub(
        r"steps = \d+\nsave_every = \d+",
        "steps = 2\nbatch_size = 4\nblock_size = 32\nvocab_size = 120",
        text,
    )
    text = text.replace('tasks = ["toeplitz", "locality_symmetry"]', 'tasks = ["toeplitz"]')
    study.write_text(text + 'task_args = { toeplitz = { length = "32", words = "12" } }\n')
    ran = _posharness("study", "run", str(study), *include, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    board = json.loads((tmp_path / "tisa2021-mini" / "boards" / "clipped-bias.json").read_text())
    assert {row["mode"] for row in board["rows"]} == {"both", "positional"}
    table = (tmp_path / "tisa2021-mini" / "tables" / "tisa2021.toeplitz.md").read_text()
    assert "| clipped-bias | both |" in table and "| BERT-A | both |" in table
