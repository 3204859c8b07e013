"""``posharness cache info|prune`` on a cache written by the real ``FeatureCache``."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest
import torch

from posharness.cache import FeatureCache
from tests.cli_helpers import cli, one_line_error

DAY = 86400.0


def fill(root: Path) -> dict[str, list[Path]]:
    """Two tensor kinds through FeatureCache, a sharded folder entry (a SentEval store)
    and a flat folder entry (a random initialisation); the old ones are ten days old."""
    cache = FeatureCache(root)
    made: dict[str, list[Path]] = {"probe": [], "reference": []}
    for i in range(3):
        key = cache.key("fp", "both", f"input{i}", "probe")
        cache.save(key, "probe", {"x": torch.zeros(16)}, {})
        made["probe"].append(cache.path(key, "probe"))
    key = cache.key("fp", "both", "corpus", "reference")
    cache.save(key, "reference", {"x": torch.zeros(64)}, {})
    made["reference"].append(cache.path(key, "reference"))
    store = root / "sentence-features" / "ab" / ("ab" + "0" * 62)
    store.mkdir(parents=True)
    for name in ("chunk-1.safetensors", "chunk-2.safetensors"):
        (store / name).write_bytes(b"x" * 100)
    made["sentence-features"] = [store]
    init = root / "pe-init" / "tupe-r-tiny-seed0"
    init.mkdir(parents=True)
    (init / "model.safetensors").write_bytes(b"y" * 300)
    made["pe-init"] = [init]
    old = time.time() - 10 * DAY
    for path in [made["probe"][0], *made["pe-init"], *made["pe-init"][0].iterdir()]:
        os.utime(path, (old, old))
    return made


def info(root: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()  # what an earlier command printed
    assert cli("cache", "info", "--cache-dir", str(root), "--format", "json") == 0
    return json.loads(capsys.readouterr().out)


def test_info_counts_entries_and_bytes_by_kind(tmp_path: Path, capsys) -> None:
    made = fill(tmp_path / "cache")
    document = info(tmp_path / "cache", capsys)
    kinds = {k["kind"]: k for k in document["kinds"]}
    assert {k: v["entries"] for k, v in kinds.items()} == {
        "pe-init": 1, "probe": 3, "reference": 1, "sentence-features": 1,
    }  # fmt: skip
    assert kinds["sentence-features"]["bytes"] == 200  # one entry: the whole store
    assert kinds["probe"]["bytes"] == sum(p.stat().st_size for p in made["probe"])
    assert document["bytes"] == sum(k["bytes"] for k in kinds.values())
    assert cli("cache", "info", "--cache-dir", str(tmp_path / "cache")) == 0
    assert "sentence-features" in capsys.readouterr().out


def test_prune_by_kind_and_by_age_removes_whole_entries(tmp_path: Path, capsys) -> None:
    root = tmp_path / "cache"
    made = fill(root)
    assert cli("cache", "prune", "--cache-dir", str(root), "--kind", "sentence-features") == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert not made["sentence-features"][0].exists()
    assert not (root / "sentence-features" / "ab").exists()  # empty shard folder gone
    assert cli("cache", "prune", "--cache-dir", str(root), "--older-than", "7d") == 0
    assert not made["probe"][0].exists() and not made["pe-init"][0].exists()
    assert all(p.exists() for p in made["probe"][1:] + made["reference"])
    assert info(root, capsys)["entries"] == 3


def test_dry_run_removes_nothing_and_all_removes_everything(tmp_path: Path, capsys) -> None:
    root = tmp_path / "cache"
    fill(root)
    before = info(root, capsys)
    assert cli("cache", "prune", "--cache-dir", str(root), "--all", "--dry-run") == 0
    assert "would remove 6 entries" in capsys.readouterr().out
    assert info(root, capsys) == before
    assert cli("cache", "prune", "--cache-dir", str(root), "--all") == 0
    assert info(root, capsys)["entries"] == 0


def test_a_live_process_temporary_is_left_alone(tmp_path: Path, capsys) -> None:
    root = tmp_path / "cache"
    fill(root)
    live = root / "probe" / "ff" / f".x.safetensors.ph-{socket.gethostname()}-{os.getpid()}-a.tmp"
    live.parent.mkdir(parents=True, exist_ok=True)
    live.write_bytes(b"being written")
    assert cli("cache", "prune", "--cache-dir", str(root), "--kind", "probe") == 0
    assert live.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["prune"], "needs a selector"),
        (["prune", "--kind", "nope"], "--kind nope: this cache holds the kinds"),
        (["prune", "--older-than", "soon"], "--older-than 'soon': give a number and a unit"),
    ],
)
def test_bad_prune_requests_are_one_line(tmp_path: Path, capsys, args, message) -> None:
    root = tmp_path / "cache"
    fill(root)
    before = info(root, capsys)
    assert cli("cache", *args, "--cache-dir", str(root)) == 2
    assert message in one_line_error(capsys)
    assert info(root, capsys) == before


def test_a_folder_that_is_not_a_cache_is_refused(tmp_path: Path, capsys) -> None:
    assert cli("cache", "info", "--cache-dir", str(tmp_path / "missing")) == 2
    assert "does not exist" in one_line_error(capsys)
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine")
    assert cli("cache", "prune", "--all", "--cache-dir", str(home)) == 2
    assert "does not look like a posharness cache" in one_line_error(capsys)
    assert (home / "notes.txt").exists()
