"""Committed boards travel (issue 27, part 6), and rows never replace each other silently
(part 5).

Every string in ``leaderboards/`` — each board's values and keys, each per-example
bundle's, each Markdown file's text — must mean the same on a fresh clone: no absolute
path of the machine that made it, no ``../`` path out of the folder. Results record data
files and checkpoints by portable names; a board names results outside its folder by a
portable key; a merge keeps rows of another reference corpus or split apart and says what
it did.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from posharness.boards import leaderboard as lb
from posharness.boards.portable import MACHINE_PATH, rewrite, unportable
from posharness.boards.views import to_markdown
from posharness.contracts.results import (
    Metric,
    ModeInfo,
    ModelInfo,
    TaskInfo,
    portable_options,
    portable_path,
    portable_spec,
    read_result,
)
from tests.result_factory import save_cell, synthetic_result, write_examples

BOARDS = Path(__file__).resolve().parents[3] / "leaderboards"
# In prose, an absolute path (MACHINE_PATH) or two levels up, which leaves any checkout;
# `../shared/data`, the data folder beside a checkout, is the project's documented place.
IN_PROSE = re.compile(rf"{MACHINE_PATH.pattern}|\.\./\.\./")


def write_run(folder: Path, model: str, fingerprint: str, outcomes: dict[int, list[int]]) -> None:
    """One result per seed of a made-up ``probe`` task, with per-example 0/1 values."""
    for seed, values in outcomes.items():
        stem = folder / model / f"probe__both__seed{seed}"
        examples = write_examples(stem, ({"id": str(i), "acc": v} for i, v in enumerate(values)))
        result = synthetic_result(
            spec=model,
            fingerprint=fingerprint,
            task="probe",
            seed=seed,
            metrics={"acc": Metric(value=sum(values) / len(values))},
            examples_file=examples,
        )
        save_cell(folder, result)


def _bundles() -> list[Path]:
    return sorted(BOARDS.glob("*.examples.json.gz"))


@pytest.mark.parametrize("board", sorted(BOARDS.glob("*.json")), ids=lambda p: p.name)
def test_no_committed_board_holds_a_machine_path_or_leaves_its_folder(board: Path) -> None:
    document = json.loads(board.read_text(encoding="utf-8"))
    assert unportable(document, board.parent) == []


@pytest.mark.parametrize("bundle", _bundles(), ids=lambda p: p.name)
def test_no_committed_bundle_holds_a_machine_path_or_leaves_its_folder(bundle: Path) -> None:
    with gzip.open(bundle, "rt", encoding="utf-8") as handle:
        document = json.load(handle)
    assert unportable(document, bundle.parent) == []


@pytest.mark.parametrize("page", sorted(BOARDS.glob("*.md")), ids=lambda p: p.name)
def test_no_committed_markdown_names_a_machine_path(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert [m.group(0) for m in IN_PROSE.finditer(text)] == []


def test_the_check_catches_what_the_committed_boards_once_held(tmp_path: Path) -> None:
    once = {
        "model": "bert-a@/tmp/pt/runs/bert-a-mini/final",
        "results": ["../../../tmp/pt/after/m/locality_symmetry__both__seed0.json", "m/x.json"],
        "options": {"select_treebank": "C:\\data\\ewt.conllu"},
    }
    found = unportable(once, tmp_path)
    assert len(found) == 3 and not any("m/x.json" in f for f in found)
    assert IN_PROSE.search("--output-dir /tmp/minilm-results")
    assert IN_PROSE.search("--data-dir ../../data")
    assert not IN_PROSE.search("--data-dir ../shared/data; locality_symmetry/locality")
    assert not IN_PROSE.search("…/ud_english_ewt/en_ewt-ud-dev.conllu, https://x.org/a/b")


def test_committed_bundles_are_keyed_by_the_names_their_boards_give() -> None:
    for bundle in _bundles():
        board = lb.load(bundle.with_name(bundle.name.replace(".examples.json.gz", ".json")))
        with gzip.open(bundle, "rt", encoding="utf-8") as handle:
            keys = set(json.load(handle))
        named = {path for row in board.rows for path in row.results}
        assert keys <= named, bundle.name


def test_the_zoo_boards_say_they_are_a_smoke_test() -> None:
    for name in ("pe-zoo-mini", "pe-zoo-mini-init", "pe-zoo-mini-2k"):
        board = lb.load(BOARDS / f"{name}.json")
        assert "smoke test" in board.name and "not findings" in board.name
        assert board.name in to_markdown(board) or "smoke test" in board.name


# -- what results record ------------------------------------------------------------------


def test_a_data_file_option_is_recorded_by_a_portable_name_and_its_hash(tmp_path: Path) -> None:
    data = tmp_path / "ud" / "dev.conllu"
    data.parent.mkdir()
    data.write_text("# one tree\n")
    task = TaskInfo(
        name="dep_heads",
        version="2",
        kind="attention-analysis",
        main_metric="macro",
        data_hash="h",
        options={"select_treebank": str(data), "relations": "collapsed", "top": 20},
        settings={"input": str(data)},
    )
    recorded = task.options["select_treebank"]
    assert recorded.startswith("…/ud/dev.conllu (sha256 ") and str(tmp_path) not in recorded
    assert task.options["relations"] == "collapsed" and task.options["top"] == 20
    assert task.settings["input"] == "…/ud/dev.conllu"
    other = data.with_name("other.conllu")
    other.write_text("# another tree\n")
    assert portable_path(str(other), with_hash=True).split("(")[1] != recorded.split("(")[1]


def test_a_checkpoint_outside_the_working_folder_is_named_by_its_last_parts() -> None:
    model = ModelInfo(
        spec="bert-a@/tmp/pt/runs/bert-a-mini/final",
        fingerprint="pe-1",
        pe_card={},
        details={"checkpoint": "/root/.cache/hub/snapshots/abc", "num_layers": 4},
    )
    assert model.spec == "bert-a@…/bert-a-mini/final"
    assert model.details == {"checkpoint": "…/snapshots/abc", "num_layers": 4}
    assert portable_spec("hf:bert-base-uncased") == "hf:bert-base-uncased"
    assert portable_spec("minilm") == "minilm"


def test_a_written_result_reads_back_with_no_machine_path(tmp_path: Path) -> None:
    write_run(tmp_path / "r", "m1", "f1", {0: [1, 0]})
    (path,) = sorted((tmp_path / "r").rglob("*.json"))
    text = json.loads(path.read_text())
    text["model"]["spec"] = f"tupe-r@{tmp_path}/runs/tupe-r-mini/final"
    path.write_text(json.dumps(text))
    result = read_result(path)
    assert unportable(result.model_dump(), path.parent) == []


# -- where a board names its results ------------------------------------------------------


def test_a_board_in_a_work_tree_keys_results_outside_its_folder(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    board = tmp_path / "repo" / "leaderboards" / "b.json"
    outside = tmp_path / "out" / "minilm" / "toeplitz__both__seed0.json"
    beneath = board.parent / "kept" / "minilm" / "toeplitz__both__seed0.json"
    key = lb.relative_to_board(outside, board.parent)
    assert key == "results/out/minilm/toeplitz__both__seed0.json"
    assert lb.relative_to_board(beneath, board.parent) == "kept/minilm/toeplitz__both__seed0.json"
    local = tmp_path / "loose" / "b.json"  # in no work tree: a local board, plain paths
    assert lb.relative_to_board(outside, local.parent) == "../out/minilm/toeplitz__both__seed0.json"


def test_rewriting_a_board_keeps_every_number_and_bundle_entry(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    board = tmp_path / "lb" / "zoo.json"
    board.parent.mkdir()
    shutil.copy(BOARDS / "pe-zoo-mini.json", board)
    shutil.copy(BOARDS / "pe-zoo-mini.examples.json.gz", board.with_name("zoo.examples.json.gz"))
    old = lb.load(board)
    raw = json.loads(board.read_text())
    raw["rows"][0]["model"] = "tupe-r@/tmp/pt/runs/tupe-r-mini/final"  # as it once was
    board.write_text(json.dumps(raw))
    done = rewrite(board)
    new = lb.load(board)
    assert done.left == [] and new.rows[0].model == "tupe-r@…/tupe-r-mini/final"
    assert [r.scores for r in new.rows] == [r.scores for r in old.rows]
    again = board.read_bytes()
    rewrite(board)  # rerunnable: a portable board comes back unchanged, but for the time
    assert json.loads(board.read_bytes()) == json.loads(again)


# -- rows of other settings are kept apart, and the run says what happened ----------------


def _board_of(tmp_path: Path, name: str, reference: str | None) -> lb.Leaderboard:
    folder = tmp_path / name
    write_run(folder, "m1", "f1", {0: [1, 0, 1, 1]})
    results = lb.collect_results(folder)
    if reference is not None:  # a corpus-based split matters to the approximate modes
        for _, result in results:
            result.mode = ModeInfo(name="positional", exact=False, definition="tisa-mean-word")
            result.model.details["decomposition"] = {
                "definition": "tisa-mean-word",
                "reference": reference,
            }
    return lb.build(results, "x", tmp_path / "board.json")


def test_another_reference_corpus_adds_a_row_instead_of_replacing_one(tmp_path: Path) -> None:
    embedded = _board_of(tmp_path, "a", "reference_text/english.txt (sha256 aaaa), 32x512 tokens")
    wiki = _board_of(tmp_path, "b", "wikitext-2/wiki.valid.tokens (sha256 bbbb), 32x512 tokens")
    board, summary = lb.merge_with_summary(embedded, wiki)
    assert len(board.rows) == 2
    assert (summary.added, summary.replaced, summary.kept) == (1, (), 1)
    assert summary.text() == "1 row added, 1 other row kept"
    labels = to_markdown(board)
    assert "corpus reference_text/english.txt" in labels and "corpus wikitext-2" in labels
    assert "positional (tisa-mean-word)" in labels


def test_a_rerun_under_the_same_settings_says_it_replaced_scores(tmp_path: Path) -> None:
    first = _board_of(tmp_path, "a", None)
    second = first.model_copy(deep=True)
    second.rows[0].scores["probe/acc"].mean = 0.25
    board, summary = lb.merge_with_summary(first, second)
    assert len(board.rows) == 1 and summary.added == 0
    assert summary.text() == "earlier scores replaced for m1 (both): probe"
    _, same = lb.merge_with_summary(board, board)
    assert same.text() == "1 row rerun to the same scores"


def test_a_merge_keeps_the_boards_display_name(tmp_path: Path) -> None:
    earlier = _board_of(tmp_path, "a", None).model_copy(update={"name": "zoo (smoke test)"})
    merged = lb.merge(earlier, _board_of(tmp_path, "b", None))
    assert merged.name == "zoo (smoke test)"


def test_a_rerun_naming_the_same_data_file_by_another_path_is_admitted(tmp_path: Path) -> None:
    """Admission compares the options a user typed with the portable ones a row holds:
    the same file by a relative path passes, and so does an edited file under the same
    name (new data for the same setting: the cell is recomputed and the merge says it
    replaced the earlier scores); another file is refused."""
    from posharness.base.errors import SettingsConflictError

    data = tmp_path / "ud" / "dev.conllu"
    data.parent.mkdir()
    data.write_text("# one tree\n")
    board = _board_of(tmp_path, "a", None)
    row = board.rows[0].model_copy(
        update={"settings": {"options": {"probe": portable_options({"file": str(data)})}}}
    )
    lb.check_task_options(row, "probe", {"file": str(data)})
    data.write_text("# another tree\n")
    lb.check_task_options(row, "probe", {"file": str(data)})
    other = tmp_path / "ud" / "test.conllu"
    other.write_text("# one tree\n")
    with pytest.raises(SettingsConflictError, match="test.conllu"):
        lb.check_task_options(row, "probe", {"file": str(other)})


def test_a_result_file_name_can_keep_two_reference_corpora_apart() -> None:
    from dataclasses import replace

    from posharness.contracts.cell_key import CellKey

    plain = CellKey(fingerprint="f", mode="both", task="t", seed=0)
    wiki = replace(plain, corpus="wikitext-2/wiki.valid.tokens (sha256 f0)")
    embedded = replace(plain, corpus="reference_text/english.txt (sha256 aa)")
    assert wiki.suffix.startswith("__corpus") and wiki.suffix != embedded.suffix
    assert plain.suffix == "" and plain.file_name == "t__both__seed0.json"  # names stay valid
