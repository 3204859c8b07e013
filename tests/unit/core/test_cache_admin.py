"""``posharness cache info|prune`` on a cache written by the real ``FeatureCache``, with a
SentEval-style feature store, a random initialisation and a file-hash memo beside it."""

from __future__ import annotations

import io
import json
import os
import socket
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import torch
from rich.console import Console

import posharness.cli.console as console_module
from posharness.storage.cache import FeatureCache
from posharness.storage.cache_admin import STAGING_GRACE_S, parse_duration, remove, scan, select
from tests.cli_helpers import cli, one_line_error

DAY = 86400.0
FIXED = 1_700_000_000.0  # 2023-11-14T22:13:20Z: a write time that does not depend on today
DEAD_PID = 4_194_305  # above Linux's largest pid_max: no process can have it


def stamp(path: Path, when: float) -> None:
    """Set the write time of ``path`` and, for a folder, of everything in it."""
    for item in [path, *(path.rglob("*") if path.is_dir() else [])]:
        os.utime(item, (when, when))


def fill(root: Path, now: float) -> dict[str, list[Path]]:
    """Two FeatureCache kinds, a sharded folder entry (a SentEval store of two chunks), a
    flat folder entry (a random initialisation) and a flat file (a file-hash memo). The
    first identical-word entry and the initialisation were written ten days before ``now``,
    everything else at ``now``."""
    cache = FeatureCache(root)
    made: dict[str, list[Path]] = {"identical-word-attention": [], "reference-attention-inputs": []}
    for i in range(3):
        key = cache.key("fp", "both", f"input{i}", "identical-word-attention")
        cache.save(key, "identical-word-attention", {"x": torch.zeros(16)}, {})
        made["identical-word-attention"].append(cache.path(key, "identical-word-attention"))
    key = cache.key("fp", "both", "corpus", "reference-attention-inputs")
    cache.save(key, "reference-attention-inputs", {"x": torch.zeros(64)}, {"corpus": "en"})
    made["reference-attention-inputs"].append(cache.path(key, "reference-attention-inputs"))
    key = cache.key("fp", "both", "any sentence", "sentence-features")
    store = root / "sentence-features" / key[:2] / key
    store.mkdir(parents=True)
    for name, size in (("chunk-aaa.safetensors", 100), ("chunk-bbb.safetensors", 250)):
        (store / name).write_bytes(b"x" * size)
    made["sentence-features"] = [store]
    init = root / "pe-init" / "tupe-r-tiny-seed0-vocab30522"
    init.mkdir(parents=True)
    (init / "config.json").write_text("{}")
    (init / "model.safetensors").write_bytes(b"y" * 300)
    made["pe-init"] = [init]
    memo = root / "file-hashes" / f"{'c' * 64}.txt"
    memo.parent.mkdir()
    memo.write_text("d" * 64)
    made["file-hashes"] = [memo]
    for entries in made.values():
        for entry in entries:
            stamp(entry, now)
    for entry in (made["identical-word-attention"][0], init):
        stamp(entry, now - 10 * DAY)
    return made


def files_under(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def size_of(entry: Path) -> int:
    if entry.is_file():
        return entry.stat().st_size
    return sum(p.stat().st_size for p in entry.rglob("*") if p.is_file())


def info_json(root: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()  # what an earlier command printed
    assert cli("cache", "info", "--cache-dir", str(root), "--format", "json") == 0
    return json.loads(capsys.readouterr().out)


def prune(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert cli("cache", "prune", "--cache-dir", str(root), *args) == 0
    return capsys.readouterr().out


@pytest.fixture
def narrow_console(monkeypatch: pytest.MonkeyPatch):
    """The CLI's console, ``width`` columns wide, writing to a buffer it returns."""

    def install(width: int) -> io.StringIO:
        buffer = io.StringIO()
        narrow = Console(file=buffer, width=width, color_system=None)
        monkeypatch.setattr(console_module, "console", lambda: narrow)
        return buffer

    return install


# -- info -------------------------------------------------------------------------------
def test_info_json_gives_exact_bytes_entries_and_write_times_per_kind(tmp_path, capsys):
    root = tmp_path / "cache"
    made = fill(root, now=FIXED)
    document = info_json(root, capsys)
    kinds = {k["kind"]: k for k in document["kinds"]}
    assert {k: v["entries"] for k, v in kinds.items()} == {
        "file-hashes": 1, "identical-word-attention": 3, "pe-init": 1,
        "reference-attention-inputs": 1, "sentence-features": 1,
    }  # fmt: skip
    for kind, entries in made.items():
        assert kinds[kind]["bytes"] == sum(size_of(e) for e in entries), kind
    assert kinds["sentence-features"]["bytes"] == 350  # one entry: the whole store
    assert kinds["pe-init"]["bytes"] == 302
    assert document["bytes"] == sum(k["bytes"] for k in kinds.values())
    assert document["entries"] == 7 and document["in_use"] == 0
    assert document["cache"] == str(root)
    old = datetime.fromtimestamp(FIXED - 10 * DAY, UTC).isoformat(timespec="seconds")
    new = datetime.fromtimestamp(FIXED, UTC).isoformat(timespec="seconds")
    assert kinds["identical-word-attention"]["oldest"] == old == "2023-11-04T22:13:20+00:00"
    assert kinds["identical-word-attention"]["newest"] == new
    assert kinds["sentence-features"]["oldest"] == kinds["sentence-features"]["newest"] == new


def test_info_lists_an_empty_kind_with_no_write_times(tmp_path, capsys):
    root = tmp_path / "cache"
    (root / "report-figures").mkdir(parents=True)
    document = info_json(root, capsys)
    assert document["entries"] == 0 and document["bytes"] == 0
    assert document["kinds"] == [
        {"kind": "report-figures", "entries": 0, "bytes": 0, "in_use": 0,
         "oldest": None, "newest": None},
    ]  # fmt: skip


@pytest.mark.parametrize("width", [30, 120])
def test_info_table_keeps_kind_names_and_the_folder_whole(tmp_path, narrow_console, width):
    root = tmp_path / "a-rather-long-cache-folder-name" / "cache"
    fill(root, now=FIXED)
    buffer = narrow_console(width)
    assert cli("cache", "info", "--cache-dir", str(root)) == 0
    out = buffer.getvalue()
    lines = out.splitlines()
    assert any(str(root) in line for line in lines)  # the path on one line, not cut
    assert "7 entries, 1." in out  # readable total: about 1.x kB
    for kind in ("reference-attention-inputs", "identical-word-attention", "sentence-features"):
        assert any(kind in line for line in lines), kind
    assert "350 bytes" in out  # the store's size, human-readable
    assert "…" not in out


# -- prune ------------------------------------------------------------------------------
def test_prune_by_kind_removes_the_whole_store_and_nothing_else(tmp_path, capsys):
    root = tmp_path / "cache"
    made = fill(root, now=time.time())
    before = files_under(root)
    out = prune(root, capsys, "--kind", "sentence-features")
    assert "removed 1 entry, 350 bytes" in out
    assert "sentence-features: 1 entry, 350 bytes" in out
    store = made["sentence-features"][0]
    assert not store.exists()
    assert not list(store.parent.iterdir())  # no chunk, no renamed leftover
    assert files_under(root) == {
        k: v for k, v in before.items() if not k.startswith("sentence-features")
    }


def test_prune_by_age_removes_only_entries_written_before_the_cutoff(tmp_path, capsys):
    root = tmp_path / "cache"
    made = fill(root, now=time.time())
    out = prune(root, capsys, "--older-than", "7d")
    assert "removed 2 entries" in out
    assert "identical-word-attention: 1 entry" in out and "pe-init: 1 entry" in out
    assert not made["identical-word-attention"][0].exists() and not made["pe-init"][0].exists()
    assert all(p.exists() for p in made["identical-word-attention"][1:])
    assert info_json(root, capsys)["entries"] == 5


def test_kind_and_age_together_remove_entries_that_match_both(tmp_path, capsys):
    root = tmp_path / "cache"
    made = fill(root, now=time.time())
    out = prune(root, capsys, "--kind", "pe-init", "--older-than", "7d")
    assert "removed 1 entry" in out
    assert not made["pe-init"][0].exists()
    assert made["identical-word-attention"][0].exists()  # as old, another kind


def test_age_selection_is_measured_from_the_given_now(tmp_path):
    root = tmp_path / "cache"
    fill(root, now=FIXED)
    found = scan(root, now=FIXED)
    nine_days = select(found, older_than_s=9 * DAY, now=FIXED).chosen
    assert {e.kind for e in nine_days} == {"identical-word-attention", "pe-init"}
    assert select(found, older_than_s=11 * DAY, now=FIXED).chosen == ()
    assert len(select(found, older_than_s=1, now=FIXED + 2).chosen) == 7


def test_dry_run_lists_what_it_would_remove_and_removes_nothing(tmp_path, capsys):
    root = tmp_path / "cache"
    made = fill(root, now=time.time())
    before = files_under(root)
    out = prune(root, capsys, "--all", "--dry-run")
    assert "would remove 7 entries" in out
    store = made["sentence-features"][0].relative_to(root)
    assert f"{store}  350 bytes" in out
    assert files_under(root) == before


def test_all_removes_every_entry_and_leaves_a_cache_behind(tmp_path, capsys):
    root = tmp_path / "cache"
    fill(root, now=time.time())
    out = prune(root, capsys, "--all")
    assert "removed 7 entries" in out
    assert files_under(root) == {}
    document = info_json(root, capsys)  # still a cache: its kind folders stay
    assert document["entries"] == 0 and len(document["kinds"]) == 5


# -- concurrent writers and symlinks ----------------------------------------------------
def temporary(folder: Path, host: str, pid: int) -> Path:
    """A temporary named as posharness.storage.io.atomic_target names them."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f".chunk-ccc.safetensors.ph-{host}-{pid}-k2j4.tmp"
    path.write_bytes(b"being written")
    return path


def test_temporaries_of_live_processes_and_the_store_they_are_in_are_left_alone(tmp_path, capsys):
    root = tmp_path / "cache"
    made = fill(root, now=time.time())
    here = socket.gethostname()
    live = temporary(root / "identical-word-attention" / "ff", here, os.getpid())
    remote = temporary(root / "identical-word-attention" / "fe", f"not-{here}", 12)
    store = made["sentence-features"][0]
    inside = temporary(store, here, os.getpid())
    dead = temporary(root / "identical-word-attention" / "fd", here, DEAD_PID)
    assert info_json(root, capsys)["in_use"] == 3  # two temporaries, one store
    out = prune(root, capsys, "--all")
    assert "left 3 entries that a running job is writing" in out
    assert live.exists() and remote.exists() and inside.exists()
    assert {p.name for p in store.iterdir()} >= {"chunk-aaa.safetensors", "chunk-bbb.safetensors"}
    assert not dead.exists()  # a killed run's leftover goes


def test_an_untagged_staging_folder_is_in_use_only_while_recent(tmp_path):
    root = tmp_path / "cache"
    staging = root / "pe-init" / "tupe-r-tiny-seed0-vocab30522.tmp"
    staging.mkdir(parents=True)
    (staging / "model.safetensors").write_bytes(b"z" * 10)
    stamp(staging, FIXED)
    recent = select(scan(root, now=FIXED + 60), everything=True, now=FIXED + 60)
    assert recent.chosen == () and [e.path for e in recent.in_use] == [staging]
    later = FIXED + 2 * STAGING_GRACE_S
    stale = select(scan(root, now=later), everything=True, now=later)
    assert [e.path for e in stale.chosen] == [staging]
    assert remove(stale.chosen) and not staging.exists()


def test_lock_files_are_neither_counted_nor_removed(tmp_path, capsys):
    root = tmp_path / "cache"
    fill(root, now=time.time())
    lock = root / "file-hashes" / f".{'c' * 64}.txt.lock"
    lock.write_text("")
    assert info_json(root, capsys)["entries"] == 7
    prune(root, capsys, "--all")
    assert lock.exists()


def test_symlinks_are_never_followed_out_of_the_cache(tmp_path, capsys):
    root = tmp_path / "cache"
    made = fill(root, now=time.time())
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "thesis.safetensors").write_bytes(b"p" * 5000)
    shard = made["identical-word-attention"][0].parent
    (shard / "link.safetensors").symlink_to(outside / "thesis.safetensors")  # an entry
    kind = root / "identical-word-attention"
    free = next(f"{i:02x}" for i in range(256) if not (kind / f"{i:02x}").exists())
    (kind / free).symlink_to(outside)  # a shard
    (root / "pe-init" / "linked-init").symlink_to(outside)  # a flat folder entry
    (root / "elsewhere").symlink_to(outside)  # a kind
    store = made["sentence-features"][0]
    (store / "chunk-link.safetensors").symlink_to(outside / "thesis.safetensors")
    document = info_json(root, capsys)
    assert document["entries"] == 7 and document["bytes"] < 5000
    assert "elsewhere" not in {k["kind"] for k in document["kinds"]}
    prune(root, capsys, "--all")
    assert (outside / "thesis.safetensors").read_bytes() == b"p" * 5000


# -- refusals ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["prune"], "needs a selector: --kind KIND, --older-than AGE (e.g. 30d) or --all"),
        (
            ["prune", "--kind", "sentence-feature"],
            "--kind sentence-feature: not in this cache (did you mean sentence-features?); "
            "its kinds: file-hashes, identical-word-attention, pe-init, "
            "reference-attention-inputs, sentence-features",
        ),
        (["prune", "--kind", "pe-init", "--all"], "--all selects every entry"),
        (["prune", "--older-than", "soon"], "--older-than 'soon': give a number and a unit"),
        (["prune", "--older-than", "30"], "--older-than '30': give a number and a unit"),
    ],
)
def test_bad_prune_requests_are_refused_in_one_line(tmp_path, capsys, args, message):
    root = tmp_path / "cache"
    fill(root, now=time.time())
    before = files_under(root)
    capsys.readouterr()
    assert cli("cache", *args, "--cache-dir", str(root)) == 2
    assert message in one_line_error(capsys)
    assert files_under(root) == before


@pytest.mark.parametrize("command", [["info"], ["prune", "--all"]])
def test_a_missing_folder_is_refused(tmp_path, capsys, command):
    assert cli("cache", *command, "--cache-dir", str(tmp_path / "missing")) == 2
    assert "cache folder" in (error := one_line_error(capsys)) and "does not exist" in error
    assert not (tmp_path / "missing").exists()


def test_the_default_folder_comes_from_the_environment(tmp_path, capsys, monkeypatch):
    root = tmp_path / "from-env"
    fill(root, now=FIXED)
    monkeypatch.setenv("POSHARNESS_CACHE", str(root))
    capsys.readouterr()
    assert cli("cache", "info", "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["cache"] == str(root)


@pytest.mark.parametrize(
    ("stray", "message"),
    [
        ("notes.txt", "holds the file notes.txt beside its kind folders"),
        ("src", "holds the folder src, which is not a cache kind"),
    ],
)
def test_a_folder_that_is_not_a_cache_is_refused_before_anything_goes(
    tmp_path, capsys, stray, message
):
    project = tmp_path / "project"  # e.g. a run made with --cache-dir .
    fill(project, now=time.time())
    if stray.endswith(".txt"):
        (project / stray).write_text("mine")
    else:
        (project / stray / "code").mkdir(parents=True)
        (project / stray / "code" / "main.py").write_text("print('mine')")
    before = files_under(project)
    for command in (["info"], ["prune", "--all"]):
        capsys.readouterr()
        assert cli("cache", *command, "--cache-dir", str(project)) == 2
        error = one_line_error(capsys)
        assert "does not look like a posharness cache" in error and message in error
    assert files_under(project) == before


@pytest.mark.parametrize(
    ("text", "seconds"), [("90m", 5400), ("12h", 43200), ("30d", 2_592_000), ("2w", 1_209_600),
                          ("1.5h", 5400), ("45s", 45)]
)  # fmt: skip
def test_durations_read_as_seconds(text, seconds):
    assert parse_duration(text) == seconds
