"""The zoo's modules import one way: no import circle among ``posharness.models.zoo.*``.

check-pe's three modules used to import each other (``check`` <-> ``check_claims`` <->
``check_terms``, issue 45 part 4); its exception now lives in the lowest of them,
``check_faults``. The graph is drawn with grimp (installed with import-linter) on the
installed layout, late imports inside functions included, since a circle through a late
import is still a circle a reader has to follow.
"""

from __future__ import annotations

import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp")

ROOT = Path(__file__).resolve().parents[4]
ZOO = "posharness.models.zoo"


def _layout(target: Path) -> Path:
    """``posharness`` as installed (harness/ with models/ and tasks/ inside), as links."""
    package = target / "posharness"
    package.mkdir(parents=True)
    for entry in (ROOT / "harness").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for folder in ("models", "tasks"):
        (package / folder).symlink_to(ROOT / folder)
    return target


def test_no_import_circle_among_the_zoo_modules(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "path", [str(_layout(tmp_path)), *sys.path])
    graph = grimp.build_graph("posharness", exclude_type_checking_imports=True, cache_dir=None)
    zoo = {m for m in graph.modules if m == ZOO or m.startswith(f"{ZOO}.")}
    assert f"{ZOO}.check" in zoo and f"{ZOO}.check_faults" in zoo
    edges = {m: {t for t in graph.find_modules_directly_imported_by(m) if t in zoo} for m in zoo}
    try:
        tuple(TopologicalSorter(edges).static_order())
    except CycleError as circle:
        pytest.fail(f"an import circle among the zoo's modules: {' -> '.join(circle.args[1])}")
