"""A pretraining run folder and a prepared corpus name no path of the machine (issue 39).

The corpus is recorded by name and content hash in the loss log and the manifest, so a run
folder copied elsewhere says which corpus it was without saying where it lay.
"""

from __future__ import annotations

import json
from pathlib import Path

from posharness.models.pretrain.log import LossLog, LossRecord, read_log


def machine_paths(folder: Path, *paths: Path) -> list[str]:
    """Each text file under ``folder`` that holds one of ``paths`` (or the home folder)."""
    wanted = [str(p) for p in paths] + [str(Path.home())]
    found = []
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # weights, images: not text
        found += [f"{file.relative_to(folder)}: {w}" for w in wanted if w in text]
    return found


def test_a_pretraining_run_folder_and_its_corpus_hold_no_absolute_path(
    tmp_path, corpus, tokenizer
) -> None:
    from tests.cli_helpers import cli

    tokenizer.save_pretrained(str(tmp_path / "tok"))
    code = cli(
        "pretrain", "--model", "bert-a", "--size", "tiny", "--steps", "2",
        "--corpus", str(corpus), "--block-size", "16", "--tokenizer", str(tmp_path / "tok"),
        "--batch-size", "4", "--device", "cpu", "--prepared-dir", str(tmp_path / "corpora"),
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == 0
    assert machine_paths(tmp_path / "run", tmp_path) == []
    assert machine_paths(tmp_path / "corpora", tmp_path) == []
    log = read_log(tmp_path / "run" / "loss_log.json")
    assert log["corpus"]["name"] == corpus.name and len(log["corpus"]["sha256"]) == 64


def test_a_loss_log_written_with_the_corpus_path_still_reads_and_resumes(tmp_path) -> None:
    old = {
        "format": "posharness-pretrain-log/1",
        "settings": {"steps": 4},
        "corpus": {"path": "/data/wiki", "sha256": "ab" * 32},
        "records": [{"step": 1, "loss": 9.0, "learning_rate": 1e-4, "seconds": 0.5}],
    }
    path = tmp_path / "loss_log.json"
    path.write_text(json.dumps(old))
    assert read_log(path)["corpus"]["path"] == "/data/wiki"
    log = LossLog.resume(path, {"settings": {"steps": 4}, "corpus": old["corpus"]})
    log.append(LossRecord(2, 8.5, 1e-4, 1.0))
    rewritten = read_log(path)
    assert rewritten["corpus"] == {"name": "wiki", "sha256": "ab" * 32}
    assert [r["step"] for r in rewritten["records"]] == [1, 2]


def test_a_hub_dataset_keeps_its_spec_as_its_name(tmp_path) -> None:
    log = LossLog(
        tmp_path / "l.json", {"corpus": {"path": "hf:wikitext@train#text", "sha256": "x"}}
    )
    assert log.header["corpus"] == {"name": "hf:wikitext@train#text", "sha256": "x"}
