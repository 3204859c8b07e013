"""The word-swap probe sets are kept in the run's cache folder: --cache-dir, or nowhere
under --no-cache, never a fixed folder of the user's (issue 40, part 4).

Planning is handed no cache (``data_identity(options, data_dir)``), so the runner names the
run's folder with ``storage.cache.run_cache_dir_set``; a cell is handed its cache in
``ctx.cache`` and keeps the set there, as a Ray worker that never planned must.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import posharness.tasks.shuffle.probe_sets as probe_sets
import posharness.tasks.shuffle.task as shuffle_task
from posharness.contracts.task import TaskContext, resolve_options
from posharness.storage.cache import (
    FeatureCache,
    default_cache_dir,
    run_cache_dir,
    run_cache_dir_set,
)
from posharness.storage.cache_admin import scan, summarize_entries
from posharness.tasks.shuffle.task import ShuffleTask
from tests.snli_parsed import write_parsed_snli


@pytest.fixture(autouse=True)
def _fresh_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a new process: no probe set kept in memory."""
    monkeypatch.setattr(probe_sets, "_SETS", {})
    monkeypatch.setattr(probe_sets, "_SOURCES", {})
    monkeypatch.setattr(probe_sets, "_PARSED", {})


def kept_sets(root: Path) -> list[Path]:
    return sorted((root / probe_sets.FOLDER).glob("*/summary.json"))


def plan_shuffle_sr(data: Path) -> dict:
    task = ShuffleTask("shuffle_sr")
    return task.data_identity(resolve_options(task.spec, {}), data)


def test_outside_a_run_the_cache_folder_is_the_default():
    assert run_cache_dir() == default_cache_dir()
    with run_cache_dir_set(Path("/elsewhere")):
        with run_cache_dir_set(None):
            assert run_cache_dir() is None
        assert run_cache_dir() == Path("/elsewhere")
    assert run_cache_dir() == default_cache_dir()


def test_planning_keeps_the_set_under_the_runs_cache_dir(tmp_path: Path):
    data = write_parsed_snli(tmp_path / "data")
    with run_cache_dir_set(tmp_path / "run-cache"):
        plan_shuffle_sr(data)
    assert len(kept_sets(tmp_path / "run-cache")) == 1
    assert kept_sets(default_cache_dir()) == []  # $POSHARNESS_CACHE (a tmp folder) untouched


def test_planning_under_no_cache_writes_no_set_anywhere(tmp_path: Path):
    data = write_parsed_snli(tmp_path / "data")
    with run_cache_dir_set(None):
        planned = plan_shuffle_sr(data)
    assert planned["size"] > 0
    assert kept_sets(default_cache_dir()) == []
    assert not any(p.name == probe_sets.FOLDER for p in tmp_path.rglob("*"))


class _Stop(Exception):
    """Raised where the cell would train its SNLI classifier: the probe set is had by then."""


def test_a_cell_keeps_the_set_in_the_cache_it_is_handed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    data = write_parsed_snli(tmp_path / "data")
    snli = shuffle_task._snli_task()

    class NoTraining:
        spec = snli.spec

        def trained_classifier(self, model: object, ctx: TaskContext) -> None:
            raise _Stop

    monkeypatch.setattr(shuffle_task, "_snli_task", NoTraining)
    task = ShuffleTask("shuffle_sr")
    ctx = TaskContext(
        mode="both",  # type: ignore[arg-type]
        seed=0,
        device="cpu",
        batch_size=8,
        limit=None,
        cache=FeatureCache(tmp_path / "cell-cache"),
        artifact_dir=tmp_path / "artifacts",
        options=resolve_options(task.spec, {}),
        make_encoder=lambda want: None,  # type: ignore[arg-type,return-value]
        progress=lambda label, total: lambda n: None,
        data_dir=data,
    )
    with pytest.raises(_Stop):
        task.run(None, ctx)  # type: ignore[arg-type]
    assert len(kept_sets(tmp_path / "cell-cache")) == 1
    monkeypatch.setattr(probe_sets, "_SETS", {})
    with pytest.raises(_Stop):
        task.run(None, replace(ctx, cache=FeatureCache(None)))  # --no-cache
    assert kept_sets(default_cache_dir()) == []


def test_posharness_cache_counts_a_kept_set_as_one_entry(tmp_path: Path):
    """A cache holding probe sets is still a cache to ``posharness cache info|prune``."""
    data = write_parsed_snli(tmp_path / "data")
    with run_cache_dir_set(tmp_path / "run-cache"):
        plan_shuffle_sr(data)
    kinds = {k.kind: k for k in summarize_entries(scan(tmp_path / "run-cache").entries)}
    assert kinds[probe_sets.FOLDER].entries == 1


@pytest.mark.parametrize("cache", ["run-cache", None], ids=["cache-dir", "no-cache"])
def test_a_run_plans_its_probe_sets_into_its_own_cache_dir(
    tmp_path: Path, tiny_bert: Path, cache: str | None
):
    from posharness.base.errors import PosharnessError
    from posharness.run.config import RunConfig
    from posharness.run.runner import run

    class Planned(PosharnessError):
        """Refuses the planned cells, so that nothing runs."""

    def refuse(cells: list) -> None:
        raise Planned("planned")

    data = write_parsed_snli(tmp_path / "data")
    config = RunConfig(
        models=[f"hf:{tiny_bert}"],
        tasks=["shuffle_sr"],
        data_dir=data,
        output_dir=tmp_path / "results",
        cache_dir=None if cache is None else tmp_path / cache,
        device="cpu",
    )
    with pytest.raises(Planned):
        run(config, admit=refuse)
    assert kept_sets(default_cache_dir()) == []
    if cache is not None:
        assert len(kept_sets(tmp_path / cache)) == 1
