"""The zoo's option names are known without torch, and agree with what they describe.

Issue 40, part 4: a typo in ``--model-arg`` is reported before any heavy import. The names
live in ``posharness.models.zoo.option_names`` as plain tables; these tests hold the tables
to ``PEConfig`` and the built-in declarations, and check in a fresh interpreter where
torch cannot be imported that a plan failing on such a typo, and a fine-tune task's data
check, never need it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from posharness.models.zoo.encoder.config import PEConfig
from posharness.models.zoo.option_names import (
    BUILTIN_SCHEME_EXTRAS,
    OPTION_TYPES,
    scheme_option_types,
)
from posharness.pe import registry
from posharness.plugins.registry import BUILTIN
from tests.unit.tasks.finetune.test_finetune_task import write_rte

_FIXED = {"name", "size", "scheme", "vocab_size", "pad_token_id", "pe_options", "pe_origin"}


def test_option_types_are_peconfig_fields_a_user_may_set():
    annotations = vars(PEConfig)["__annotations__"]
    assert {k: v for k, v in annotations.items() if k not in _FIXED} == OPTION_TYPES


def test_builtin_scheme_extras_are_the_declared_options_beyond_peconfig():
    declared = {}
    for entry in registry.positional_encodings.entries():
        if entry.origin != BUILTIN:
            continue
        defaults = registry.declaration(entry.obj).defaults
        extras = {k: type(v).__name__ for k, v in defaults.items() if k not in OPTION_TYPES}
        if extras:
            declared[entry.name] = extras
    assert declared == BUILTIN_SCHEME_EXTRAS


def test_scheme_option_types_of_a_model_names_only_its_schemes_extras():
    assert scheme_option_types("xpos", {"xpos_gama": "0.5"}) == {
        "xpos_gamma": "float",
        "xpos_scale_base": "float",
    }
    assert scheme_option_types("tupe-r", {"relative_bucket": "64"}) == {}
    assert scheme_option_types("tupe-r", {"relative_buckets": "64"}) == {}  # nothing to look up
    assert scheme_option_types("no-such-model", {"x": "1"}) == {}


def _without_torch(script: str) -> str:
    """``script``'s stdout in a fresh interpreter where torch cannot be imported (as if it
    were not installed), so that any import of it fails the script at once."""
    blocked = "import sys\nsys.modules['torch'] = None\n" + textwrap.dedent(script)
    done = subprocess.run(
        [sys.executable, "-c", blocked], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_a_fine_tune_data_check_imports_no_torch(tmp_path: Path):
    root = write_rte(tmp_path)
    out = _without_torch(
        f"""
        from pathlib import Path
        from posharness.tasks.finetune.profiles import PROFILES
        from posharness.tasks.finetune.task import FineTuneTask
        task = FineTuneTask(PROFILES["rte"])
        print(sorted(task.data_identity(dict(task.spec.defaults), Path({str(root)!r}))))
        """
    )
    assert out == "['dev', 'train']"


def test_a_plan_with_a_zoo_option_typo_fails_before_torch_is_imported(tmp_path: Path):
    root = write_rte(tmp_path)
    out = _without_torch(
        f"""
        from pathlib import Path
        from posharness.base.errors import PosharnessError
        from posharness.run.config import RunConfig
        from posharness.run.plan import plan
        config = RunConfig(
            models=["tupe-r"], tasks=["rte"], model_args={{"relative_bucket": "64"}},
            data_dir=Path({str(root)!r}),
        )
        try:
            plan(config, "cpu")
        except PosharnessError as exc:
            print(exc)
        """
    )
    assert "--model-arg relative_bucket: did you mean relative_buckets?" in out
