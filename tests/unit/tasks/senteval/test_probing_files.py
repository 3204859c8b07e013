"""A probing file is refused, in one line naming file and line, before any model loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.base.errors import DataError
from posharness.tasks.senteval.catalog import BY_NAME, TASKS
from posharness.tasks.senteval.probing_files import probing_path, read_probing_file
from tests.cli_helpers import run_isolated
from tests.unit.tasks.senteval.probing_data import probing_lines, write_probing_folder

HEADS = Path(__file__).resolve().parents[4].parent / "shared/data/senteval/probing_heads"


@pytest.mark.parametrize("task", [t.name for t in TASKS])
def test_every_task_reads_its_generated_file(tmp_path: Path, task: str) -> None:
    folder = write_probing_folder(tmp_path, [task])
    data = read_probing_file(BY_NAME[task], probing_path(BY_NAME[task], str(folder), None))
    assert len(data.sentences) == 80
    assert sorted(set(data.splits.tolist())) == ["te", "tr", "va"]
    assert data.ids[0] == 1 and data.ids[-1] == 80  # line numbers, for paired tests
    assert len(data.sha256) == 64


def test_the_official_format_samples_parse_where_present() -> None:
    """The staged heads of the official files are train lines only: the reader accepts
    every line and then refuses the file for its missing dev and test splits."""
    if not HEADS.is_dir():
        pytest.skip(f"official format samples not present at {HEADS}")
    for task in TASKS:
        with pytest.raises(DataError, match="split 'va' is missing"):
            read_probing_file(task, HEADS / task.file.replace(".txt", ".head.txt"))


def _write(tmp_path: Path, task: str, lines: list[str]) -> Path:
    path = tmp_path / BY_NAME[task].file
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("task", "edit", "message"),
    [
        ("bshift", lambda ls: ls[:3] + ["tr\tO"] + ls[3:], r":4: 2 tab-separated fields"),
        ("bshift", lambda ls: ls[:1] + ["train\tO\ta b c"] + ls[1:], r":2: unknown split 'train'"),
        ("bshift", lambda ls: ls[:1] + ["tr\tO\t   "] + ls[1:], r":2: empty sentence"),
        ("bshift", lambda ls: ls[:1] + ["tr\tX\ta b c"] + ls[1:], r"label 'X' is not one of"),
        ("sentlen", lambda ls: ls[:1] + ["tr\t9\ta b c"] + ls[1:], r"label '9' is not one"),
        ("wc", lambda ls: ls[:1] + ["tr\tzebra\ta b c"] + ls[1:], r"'zebra' does not occur"),
        ("topconst", lambda ls: ls[:1] + ["tr\tNP VP\ta b c"] + ls[1:], r"not a '_'-joined"),
        ("tense", lambda ls: [x for x in ls if not x.startswith("te")], r"split 'te' is missing"),
        (
            "tense",
            lambda ls: [x for x in ls if not x.startswith("va\tPAST")],
            r"split 'va' has one class only",
        ),
    ],
)
def test_a_bad_line_names_file_and_line(tmp_path: Path, task: str, edit, message: str) -> None:
    path = _write(tmp_path, task, edit(probing_lines(task)))
    with pytest.raises(DataError, match=message) as info:
        read_probing_file(BY_NAME[task], path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_a_missing_file_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="build-probes senteval"):
        read_probing_file(BY_NAME["somo"], tmp_path / "odd_man_out.txt")
    with pytest.raises(DataError, match=r"--data-dir DIR \(with DIR/senteval/probing/"):
        probing_path(BY_NAME["somo"], "", None)


def plan_problems(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The lines of a plan that found several problems, one each, no traceback."""
    err = capsys.readouterr().err.strip()
    header, *problems = err.splitlines()
    assert "problems stop this run" in header and "Traceback" not in err, err
    return problems


def test_the_run_refuses_a_bad_file_before_any_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No model exists at the given path: the data error is reported in the same attempt
    (after the cheaper model check, issue 19), and nothing is written."""
    folder = write_probing_folder(tmp_path / "probes", ["bshift"])
    lines = probing_lines("bshift")
    (folder / "bigram_shift.txt").write_text("\n".join([*lines[:5], "tr\tQ\ta b c", *lines[5:]]))
    code = run_isolated(
        tmp_path, "--model", f"hf:{tmp_path / 'no-model'}", "--tasks", "bshift",
        "--task-arg", f"bshift.probes={folder}",
    )  # fmt: skip
    assert code == 2
    model, data = plan_problems(capsys)
    assert "no-model does not exist" in model and "bigram_shift.txt:6: label 'Q'" in data
    assert not list((tmp_path / "results").rglob("*.*")) and not (tmp_path / "board.json").exists()


@pytest.mark.parametrize(
    ("arg", "message"),
    [("pooling=max", "unknown pooling"), ("classifier=svm", "unknown classifier")],
)
def test_an_unknown_pooling_or_classifier_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arg: str, message: str
) -> None:
    folder = write_probing_folder(tmp_path / "probes", ["bshift"])
    code = run_isolated(
        tmp_path, "--model", f"hf:{tmp_path / 'no-model'}", "--tasks", "bshift",
        "--task-arg", f"bshift.probes={folder}", "--task-arg", f"bshift.{arg}",
    )  # fmt: skip
    assert code == 2
    assert message in plan_problems(capsys)[1]
    assert not list((tmp_path / "results").rglob("*.*"))
