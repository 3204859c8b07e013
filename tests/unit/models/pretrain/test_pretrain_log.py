"""The pretraining loss log and its curves."""

from __future__ import annotations

import json

import pytest

from posharness.base.errors import DataError
from posharness.models.pretrain.log import (
    LossLog,
    LossRecord,
    compare_curves,
    plot_loss,
    read_log,
    recipe_differences,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_run(folder, learning_rate=5e-4, corpus="abc", steps=(10, 20, 30)):
    header = {
        "settings": {"steps": 30, "learning_rate": learning_rate, "device": "cpu"},
        "corpus": {"path": "/data/wiki", "sha256": corpus},
        "model": {"model_type": "bert", "hidden_size": 32},
    }
    log = LossLog(folder / "loss_log.json", header)
    for step in steps:
        log.append(LossRecord(step, 10.0 / step, 1e-4, step * 0.5))
    return log.path


def test_every_record_leaves_a_complete_json_log(tmp_path):
    log = LossLog(tmp_path / "loss_log.json", {"settings": {"steps": 2}})
    log.append(LossRecord(1, 9.5, 1e-4, 0.1))
    assert read_log(log.path)["records"] == [
        {"step": 1, "loss": 9.5, "learning_rate": 1e-4, "seconds": 0.1}
    ]
    log.append(LossRecord(2, 9.0, 2e-4, 0.2))
    assert [r["step"] for r in read_log(log.path)["records"]] == [1, 2]
    assert read_log(log.path)["settings"] == {"steps": 2}
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_resumed_log_keeps_only_the_records_up_to_its_checkpoint(tmp_path):
    path = write_run(tmp_path)
    log = LossLog.resume(path, {"settings": {"steps": 30}})
    log.keep_until(20)
    assert [r["step"] for r in read_log(path)["records"]] == [10, 20]


def test_plot_loss_writes_a_png(tmp_path):
    png = plot_loss(write_run(tmp_path), tmp_path / "figures" / "loss.png")
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert not list(png.parent.glob(".*.tmp"))


def test_compare_curves_draws_several_runs_on_one_png(tmp_path):
    logs = [write_run(tmp_path / name) for name in ("bert-a", "tupe-r")]
    png = compare_curves(logs, tmp_path / "compare.png")
    assert png.read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(DataError, match="1 labels for 2 loss logs"):
        compare_curves(logs, tmp_path / "x.png", labels=["only one"])


def test_recipes_that_differ_are_named_and_reporting_settings_ignored(tmp_path):
    same = [read_log(write_run(tmp_path / name)) for name in ("a", "b")]
    same[1]["settings"]["device"] = "cuda"
    assert recipe_differences(same) == []
    other = read_log(write_run(tmp_path / "c", learning_rate=1e-4, corpus="def"))
    assert recipe_differences([same[0], other]) == ["learning_rate", "corpus"]


def test_a_file_that_is_not_a_loss_log_is_a_one_line_data_error(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_log(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(DataError, match="not a JSON loss log"):
        read_log(broken)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"records": []}))
    with pytest.raises(DataError, match="not a posharness pretraining loss log") as caught:
        plot_loss(other, tmp_path / "x.png")
    assert "\n" not in str(caught.value)


def test_the_loss_curves_command_compares_run_folders(tmp_path, capsys):
    from posharness.cli import main

    write_run(tmp_path / "bert-a-mini")
    write_run(tmp_path / "tupe-r-mini", learning_rate=1e-3, steps=(10, 20))
    png = tmp_path / "curves.png"
    with pytest.raises(SystemExit) as done:
        main(["loss-curves", str(tmp_path / "bert-a-mini"), str(tmp_path / "tupe-r-mini"),
              "--out", str(png)])  # fmt: skip
    assert done.value.code == 0
    assert png.read_bytes().startswith(PNG_MAGIC)
    out = capsys.readouterr().out
    assert "bert-a-mini" in out and "tupe-r-mini" in out
    assert "0.7500" in out  # tupe-r: mean of 10/10 and 10/20, its two records
    assert "recipes differ in: learning_rate" in out
    with pytest.raises(SystemExit) as done:
        main(["loss-curves", str(tmp_path / "absent"), "--out", str(tmp_path / "x.png")])
    assert done.value.code == 2
    assert "absent does not exist: give `posharness pretrain --out` folders" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "x.png").exists()
