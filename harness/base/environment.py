"""The facts about the software and machine that every result records."""

from __future__ import annotations

import functools
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

TRACKED_PACKAGES = (
    "posharness",
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "numpy",
    "scipy",
    "scikit-learn",
    "pydantic",
)


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


@functools.cache
def package_versions() -> dict[str, str]:
    return {name: package_version(name) for name in TRACKED_PACKAGES}


@functools.cache
def git_hash() -> str | None:
    """The commit of the posharness checkout this code runs from, if it is one."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    head = out.stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=5,
    ).stdout.strip()
    return f"{head}-dirty" if dirty else head


def python_version() -> str:
    return sys.version.split()[0]


def platform_name() -> str:
    return platform.platform()
