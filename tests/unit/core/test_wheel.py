"""The built distribution works without the checkout (issue 45, part 5).

The package maps three folders (harness/, models/, tasks/) into one import name with
``package-dir``, and its code reads files that are not Python: the report's templates and
static files, the embedded reference text of the positional mode, the published rows of
the paper tables. An editable install reads them from the checkout, so only a built wheel
shows whether they ship. ``python -m build`` makes the sdist and, from that sdist, the
wheel (so both are checked); the wheel is installed without ``-e`` into a fresh virtual
environment and the README's quickstart and ``posharness report`` run in a folder outside
the checkout.

The fresh environment sees the project environment's third-party packages (torch alone is
hundreds of megabytes; reinstalling them would check pip, not us) through a folder of links
to them that leaves out every posharness entry (the editable finder, its ``.pth`` and its
metadata), so ``import posharness`` can only find the wheel's copy; a test asserts that.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import needs_minilm

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_DIRS = PYPROJECT["tool"]["setuptools"]["package-dir"]  # import name -> folder
TOP_FILES = ("pyproject.toml", "README.md", "LICENSE")
TIMEOUT = 600
# The README's quickstart command (its first block); `--limit` keeps CI's cost down while
# every file the three modes read (the model, the reference text) is still read.
QUICKSTART = (
    "run", "--model", "minilm", "--mode", "both,contextual,positional",
    "--tasks", "locality_symmetry,toeplitz",
)  # fmt: skip
QUICK_LIMIT = ("--limit", "4")


def _source_files() -> list[str]:
    """Every file under the three package folders, relative to the checkout.

    Files git knows (tracked, or new and not ignored) where this is a git checkout, so a
    stray ignored file never fails the test; every file otherwise. Caches are left out.
    """
    folders = [folder for folder in PACKAGE_DIRS.values()]
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", *folders],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.split("\0")
    except (OSError, subprocess.SubprocessError):
        listed = [str(p.relative_to(ROOT)) for f in folders for p in (ROOT / f).rglob("*")]
    return sorted(
        name
        for name in listed
        if name
        and (ROOT / name).is_file()
        and "__pycache__" not in Path(name).parts
        and not name.endswith(".pyc")
    )


def installed_name(source: str) -> str:
    """Where a checkout file lands in the wheel: models/x.toml -> posharness/models/x.toml."""
    best = max(
        (item for item in PACKAGE_DIRS.items() if Path(source).is_relative_to(item[1])),
        key=lambda item: len(item[1]),
    )
    package, folder = best
    inside = Path(source).relative_to(folder)
    return str(Path(*package.split("."), inside))


def missing_from(names: set[str], sources: list[str]) -> list[str]:
    """The checkout files whose installed name is not among ``names``."""
    return [source for source in sources if installed_name(source) not in names]


def _message(kind: str, missing: list[str]) -> str:
    return (
        f"{len(missing)} file(s) of the package are not in the {kind}: "
        + ", ".join(missing)
        + " — add their folder to [tool.setuptools] packages / package-data in pyproject.toml"
    )


@dataclass(frozen=True)
class Built:
    wheel: Path
    sdist: Path
    sources: list[str]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """One sdist and one wheel per session, built from a copy of the checkout's package
    files (no ``build/`` or ``egg-info`` lands in the checkout), without build isolation:
    setuptools is installed here, so no network is needed."""
    pytest.importorskip("build", reason="`build` is not installed (pip install -e '.[test]')")
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    sources = _source_files()
    for name in [*TOP_FILES, *sources]:
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    dist = root / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = dist.glob("posharness-*.whl")
    (sdist,) = dist.glob("posharness-*.tar.gz")
    return Built(wheel, sdist, sources)


def test_every_package_file_of_the_checkout_is_in_the_wheel(built: Built) -> None:
    names = set(zipfile.ZipFile(built.wheel).namelist())
    missing = missing_from(names, built.sources)
    assert not missing, _message("wheel", missing)
    data = [s for s in built.sources if not s.endswith(".py")]
    assert data, "no data file found under the package folders: the listing is broken"


def test_every_package_file_of_the_checkout_is_in_the_sdist(built: Built) -> None:
    with tarfile.open(built.sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        names = {name.removeprefix(f"{top}/") for name in archive.getnames()}
    missing = [s for s in built.sources if s not in names]
    assert not missing, _message("sdist", missing)


def test_a_missing_data_file_is_named() -> None:
    """The check names the file (and where it would be installed), not a count."""
    names = {"posharness/report/templates/base.html"}
    sources = ["harness/report/templates/base.html", "tasks/papers/published/chen2023.toml"]
    missing = missing_from(names, sources)
    assert missing == ["tasks/papers/published/chen2023.toml"]
    assert "tasks/papers/published/chen2023.toml" in _message("wheel", missing)
    assert installed_name("models/decompose/reference_text/english.txt") == (
        "posharness/models/decompose/reference_text/english.txt"
    )


def _shadow_site(folder: Path) -> Path:
    """Links to every entry of this environment's site-packages except posharness's own."""
    folder.mkdir()
    ours = Path(sysconfig.get_path("purelib"))
    for entry in ours.iterdir():
        name = entry.name.lower()
        if name.startswith(("posharness", "__editable__")) and "posharness" in name:
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


@pytest.fixture(scope="session")
def wheel_python(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a fresh virtual environment holding the wheel (not editable)."""
    root = tmp_path_factory.mktemp("wheel-venv")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    shadow = _shadow_site(root / "third-party")
    Path(purelib, "third-party.pth").write_text(
        f"import site; site.addsitedir({str(shadow)!r})\n", encoding="utf-8"
    )
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(built.wheel)],
        check=True,
        timeout=TIMEOUT,
    )
    return python


def _call(program: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)  # POSHARNESS_CACHE / _RUNS point into tmp (conftest)
    env.update(HF_HUB_OFFLINE="1", COLUMNS="200", MPLBACKEND="Agg")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [str(program), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr}"
    return proc


@needs_minilm
@pytest.mark.integration
def test_the_installed_wheel_runs_the_quickstart_and_report_outside_the_checkout(
    wheel_python: Path, tmp_path: Path
) -> None:
    where = _call(
        wheel_python, "-c", "import posharness; print(posharness.__file__)", cwd=tmp_path
    ).stdout.strip()
    assert Path(where).is_relative_to(wheel_python.parents[1]), where
    assert not Path(where).resolve().is_relative_to(ROOT), where

    script = wheel_python.parent / "posharness"  # the console script the wheel declares
    _call(script, *QUICKSTART, *QUICK_LIMIT, cwd=tmp_path)
    board = tmp_path / "results" / "minilm.json"
    assert board.is_file()
    cells = sorted(p.stem for p in (tmp_path / "results" / "minilm").glob("*.json"))
    assert len(cells) == 6, cells  # two tasks x three modes

    _call(script, "report", str(board), "-o", "report", cwd=tmp_path)
    index = tmp_path / "report" / "index.html"
    assert index.is_file() and "minilm" in index.read_text(encoding="utf-8")
    assert list((tmp_path / "report" / "static").glob("*.css")), "the report's CSS is missing"
