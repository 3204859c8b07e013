"""``import posharness`` lets transformers' Auto classes load zoo checkpoints, without
importing torch or transformers itself (``posharness --help`` stays fast)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LOAD = (
    "from transformers import AutoConfig, AutoModel\n"
    "import sys\n"
    "model = AutoModel.from_pretrained(sys.argv[1])\n"
    "print(type(model).__name__, AutoConfig.from_pretrained(sys.argv[1]).model_type)\n"
)


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300
    )


def test_auto_model_loads_a_zoo_checkpoint_after_import_posharness(tmp_path: Path) -> None:
    from posharness.models.zoo.encoder import PEModel, config_for

    folder = tmp_path / "tupe-r"
    PEModel(config_for("tupe-r", "tiny", vocab_size=64)).save_pretrained(folder)

    without = python(LOAD, str(folder))
    assert without.returncode != 0 and "posharness-pe" in without.stderr  # what it fixes
    loaded = python("import posharness\n" + LOAD, str(folder))
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == ["PEModel", "posharness-pe"]


def test_import_posharness_imports_neither_torch_nor_transformers() -> None:
    probe = python(
        "import sys, posharness\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "[]"


def test_a_transformers_model_class_imports_after_posharness():
    """`from transformers import BertModel` imports the Auto package from inside
    modeling_utils; registering the zoo then would be a circular import, so it waits and
    still happens before any Auto lookup (a fresh process: no earlier import helps)."""
    code = (
        "import posharness\n"
        "from transformers import BertModel, AutoConfig\n"
        "print(BertModel.__name__, type(AutoConfig.for_model('posharness-pe')).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["BertModel", "PEConfig"]
