"""`posharness pretrain` runs on the documented install (`pip install -e .`, no extras): every
module the single-process training path imports is a core requirement (issue 39, part 3:
accelerate used to be an optional extra, and pretraining stopped in a raw
ModuleNotFoundError from models/pretrain/parallel.py)."""

from __future__ import annotations

import ast
from importlib.metadata import requires
from pathlib import Path

from packaging.requirements import Requirement

PRETRAIN = Path(__file__).resolve().parents[4] / "models" / "pretrain"
# Imported names that are not distributions of their own, or are ours.
_NOT_DISTRIBUTIONS = {"posharness", "torch", "__future__"}


def core_requirements() -> set[str]:
    names = set()
    for line in requires("posharness") or []:
        requirement = Requirement(line)
        if requirement.marker is None or "extra" not in str(requirement.marker):
            names.add(requirement.name.lower().replace("_", "-"))
    return names


def test_accelerate_is_a_core_requirement() -> None:
    assert "accelerate" in core_requirements()


def test_every_third_party_module_the_training_path_imports_is_required() -> None:
    import sys

    imported = set()
    for path in PRETRAIN.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
    third_party = {
        name for name in imported - _NOT_DISTRIBUTIONS if name not in sys.stdlib_module_names
    }
    aliases = {"yaml": "pyyaml", "sklearn": "scikit-learn"}
    required = core_requirements() | {"torch"}
    missing = {aliases.get(name, name).replace("_", "-") for name in third_party} - required
    assert not missing, f"models/pretrain imports {sorted(missing)}, not core requirements"


# Run in a child: extras-only distributions cannot be imported there, as on an install
# without extras; anything a core requirement needs (scipy under scikit-learn) stays. A
# fresh virtual environment would say the same at the cost of minutes of installing; this
# hides exactly the modules an install without extras would not have.
_BLOCKER = """
import sys
# None in sys.modules: `import x` raises ImportError and find_spec(x) says absent, which is
# exactly how a package that was never installed looks to every availability check
for name in sys.argv[1].split(","):
    sys.modules[name] = None
sys.argv = ["posharness", *sys.argv[2:]]
from posharness.cli import main
main()
"""


def _closure(names: set[str]) -> set[str]:
    """``names`` and every distribution they require, transitively (extras excluded)."""
    from importlib.metadata import PackageNotFoundError

    seen: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            lines = requires(name) or []
        except PackageNotFoundError:
            continue
        for line in lines:
            requirement = Requirement(line)
            if requirement.marker is None or "extra" not in str(requirement.marker):
                pending.append(requirement.name.lower().replace("_", "-"))
    return seen


def test_pretraining_runs_3_steps_with_no_extra_importable(tmp_path: Path) -> None:
    """Issue 39, part 3's done-means: the documented install (no extras) pretrains. The
    child cannot import a module of any distribution only an extra brings in."""
    import subprocess
    import sys
    from importlib.metadata import packages_distributions

    from tests.unit.models.pretrain.test_pretrain_corpus import toy_corpus

    core = _closure(core_requirements() | {"torch"})
    modules = packages_distributions()
    blocked = {
        module
        for module, dists in modules.items()
        if not any(d.lower().replace("_", "-") in core for d in dists)
        and module not in sys.stdlib_module_names
        and module not in ("posharness", "_pytest", "pytest", "tests")
    }
    installed_extras = {"ray", "spacy", "selenium"} & set(modules)
    assert installed_extras <= blocked  # the blocker does hide what extras bring
    corpus = toy_corpus(tmp_path / "corpus")
    args = ["pretrain", "--model", "bert-a", "--size", "tiny", "--corpus", str(corpus)]
    args += ["--steps", "3", "--batch-size", "4", "--block-size", "16", "--vocab-size", "100"]
    args += ["--device", "cpu", "--out", str(tmp_path / "run")]
    done = subprocess.run(
        [sys.executable, "-c", _BLOCKER, ",".join(sorted(blocked)), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "run" / "final" / "config.json").is_file()
