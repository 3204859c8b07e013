"""All-or-nothing writes and JSON-lines reading with FILE:LINE errors, shared by every family."""

from __future__ import annotations

import pytest

from posharness.base.errors import DataError, OutputError
from posharness.storage.io import atomic_target, atomic_write_json, json_object_lines


def test_a_failed_write_leaves_neither_a_partial_file_nor_a_temporary_one(tmp_path):
    target = tmp_path / "board.json"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_target(target) as tmp:
        tmp.write_text("half a docu")
        raise RuntimeError("killed mid-write")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["board.json"]


def test_a_finished_write_replaces_the_file_whole(tmp_path):
    target = tmp_path / "sub" / "log.json"
    atomic_write_json(target, {"records": [1, 2]})
    assert target.read_text() == '{\n "records": [\n  1,\n  2\n ]\n}\n'
    assert [p.name for p in target.parent.iterdir()] == ["log.json"]


def test_an_unwritable_folder_is_one_line_with_the_hint(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with (
        pytest.raises(OutputError, match="cannot write to .*: pass --out") as caught,
        atomic_target(blocker / "x.json", hint="pass --out"),
    ):
        pass
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"a": 1', "not a JSON line"),
        ("[1, 2]", "a JSON list, not an object"),
        ('"text"', "a JSON str, not an object"),
    ],
)
def test_a_bad_line_is_named_by_file_and_line(tmp_path, line, problem):
    path = tmp_path / "records.jsonl"
    path.write_text('{"ok": true}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        list(json_object_lines(path, "one record"))
    message = str(caught.value)
    assert message.startswith(f"{path}:3: {problem}")
    assert message.endswith("each line must be one record")


def test_bytes_that_are_not_utf8_are_named_by_line(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "\xff"}\n')
    with pytest.raises(DataError, match=r"records.jsonl:2: not UTF-8"):
        list(json_object_lines(path, "one record"))


def test_blank_lines_are_skipped_and_numbers_are_the_file_s(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text('\n{"a": 1}\n\n{"b": 2}\n', encoding="utf-8")
    assert list(json_object_lines(path, "one record")) == [(2, {"a": 1}), (4, {"b": 2})]


def test_written_files_get_the_usual_permissions_not_mkstemp_s(tmp_path):
    import os

    umask = os.umask(0)
    os.umask(umask)
    target = tmp_path / "result.json"
    atomic_write_json(target, {"a": 1})
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask
