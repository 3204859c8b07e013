"""The feature cache: content-addressed, atomic, loud about corruption."""

from __future__ import annotations

import os
import threading

import pytest
import torch

from posharness.base.errors import CacheError
from posharness.storage.cache import FeatureCache


def test_key_depends_on_every_part():
    base = FeatureCache.key("fp", "both", "inputs", "kind")
    assert base == FeatureCache.key("fp", "both", "inputs", "kind")
    assert (
        len(
            {
                base,
                FeatureCache.key("fp2", "both", "inputs", "kind"),
                FeatureCache.key("fp", "positional", "inputs", "kind"),
                FeatureCache.key("fp", "both", "other", "kind"),
                FeatureCache.key("fp", "both", "inputs", "kind2"),
            }
        )
        == 5
    )


def test_get_or_compute_computes_once(tmp_path):
    cache = FeatureCache(tmp_path)
    calls = []

    def compute():
        calls.append(1)
        return {"x": torch.arange(6.0).reshape(2, 3)}

    first = cache.get_or_compute("k" * 64, "kind", compute)
    second = cache.get_or_compute("k" * 64, "kind", compute)
    assert len(calls) == 1 and cache.hits == 1 and cache.misses == 1
    torch.testing.assert_close(first["x"], second["x"])


def test_disabled_cache_always_computes(tmp_path):
    cache = FeatureCache(None)
    calls = []
    for _ in range(2):
        cache.get_or_compute("k", "kind", lambda: calls.append(1) or {"x": torch.zeros(1)})
    assert len(calls) == 2


def test_writes_leave_no_temporary_files(tmp_path):
    cache = FeatureCache(tmp_path)
    cache.save("a" * 64, "kind", {"x": torch.ones(3)}, {"note": "n"})
    names = [p.name for p in tmp_path.rglob("*") if p.is_file()]
    assert names == ["a" * 64 + ".safetensors"]


def test_two_writers_of_one_key_both_leave_a_complete_file(tmp_path):
    cache = FeatureCache(tmp_path)
    tensor = torch.randn(256, 256)
    threads = [
        threading.Thread(target=cache.save, args=("b" * 64, "kind", {"x": tensor}, {}))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    torch.testing.assert_close(cache.load("b" * 64, "kind")["x"], tensor)
    assert len(list(tmp_path.rglob("*.tmp*"))) == 0


def test_corrupt_entry_raises_one_line_with_the_fix(tmp_path):
    cache = FeatureCache(tmp_path)
    cache.save("c" * 64, "kind", {"x": torch.ones(3)}, {})
    cache.path("c" * 64, "kind").write_bytes(b"truncated")
    with pytest.raises(CacheError, match="corrupt.*--no-cache") as info:
        cache.load("c" * 64, "kind")
    assert "\n" not in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to read-only folders")
def test_unwritable_cache_folder_is_reported(tmp_path):
    tmp_path.chmod(0o500)
    with pytest.raises(CacheError, match="--cache-dir"):
        FeatureCache(tmp_path / "sub").save("d" * 64, "kind", {"x": torch.ones(1)}, {})


def test_cache_folder_under_a_file_is_reported(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(CacheError, match="--no-cache"):
        FeatureCache(blocker / "cache").save("e" * 64, "kind", {"x": torch.ones(1)}, {})
