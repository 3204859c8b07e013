"""``posharness run --tasks dep_heads`` as a user meets it: gold CoNLL-U or spaCy-parsed
text in, Table A3 across modes out; a broken treebank is one line, exit 2, nothing written."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from posharness.cli import main
from posharness.tasks.dep_heads.conllu import iter_conllu
from posharness.tasks.dep_heads.tree import conllu_lines
from tests.unit.tasks.dep_heads.test_dependency_counting import random_tree

MODES = "both,contextual,positional"


def write_treebank(path: Path, sentences: int = 24, seed: int = 0) -> Path:
    rng = random.Random(seed)
    trees = [random_tree(rng, rng.randint(3, 14), i) for i in range(sentences)]
    path.write_text("".join("\n".join(conllu_lines(t)) + "\n" for t in trees), encoding="utf-8")
    return path


def run_cli(tmp_path: Path, tiny_bert: Path, *args: str) -> None:
    main(
        [
            "run",
            "--model",
            f"hf:{tiny_bert}",
            "--tasks",
            "dep_heads",
            "--model-arg",
            "absolute=mean-word-stream",
            "--device",
            "cpu",
            "--output-dir",
            str(tmp_path / "results"),
            "--leaderboard",
            str(tmp_path / "board.json"),
            *args,
        ]
    )


def run_ok(tmp_path: Path, tiny_bert: Path, *args: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(tmp_path, tiny_bert, *args)
    assert exit_info.value.code == 0


def fails_with(capsys, tmp_path: Path, tiny_bert: Path, *fragments: str, args=()) -> str:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(tmp_path, tiny_bert, *args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err
    assert not list((tmp_path / "results").rglob("dep_heads__*.json"))  # nothing half-written
    return err


def results(tmp_path: Path) -> dict[str, dict]:
    folder = next((tmp_path / "results").iterdir())
    found = {}
    for path in sorted(folder.glob("dep_heads__*__seed0.json")):
        record = json.loads(path.read_text())
        found[record["key"]["mode"]] = record  # the result records its key: no name parsing
    return found


def test_three_modes_give_results_a_mode_table_and_a_distance_chart(tmp_path, tiny_bert):
    treebank = write_treebank(tmp_path / "trees.conllu")
    run_ok(tmp_path, tiny_bert, "--mode", MODES, "--task-arg", f"dep_heads.treebank={treebank}")
    cells = results(tmp_path)
    assert set(cells) == {"both", "contextual", "positional"}
    both = cells["both"]
    table = both["details"]["table_relations"]
    arcs = {r["relation"]: r["arcs"] for r in both["details"]["relations"]["collapsed"]}
    assert both["metrics"]["macro"]["n"] == sum(arcs[r] for r in table)  # arcs, not relations
    assert any("the macro averages rest on" in flag for flag in both["flags"])  # 24 sentences
    assert {"macro", "macro_held_out", "all_arcs", "baseline_macro"} <= set(both["metrics"])
    coverage = both["task"]["settings"]["coverage"]
    assert coverage["sentences"] == 24 and coverage["root_arcs"] == 24
    assert coverage["arcs_scored"] + coverage["root_arcs"] == coverage["words"]
    assert set(both["details"]["relations"]) == {"collapsed", "full"}
    full = {r["relation"] for r in both["details"]["relations"]["full"]}
    assert "nmod:poss" in full and "nmod" in both["details"]["table_relations"]
    folder = next((tmp_path / "results").iterdir())
    table = (folder / "dep_heads__seed0__summary" / "table.md").read_text()
    header = next(line for line in table.splitlines() if line.startswith("| relation"))
    assert "both" in header and "contextual (mean-word-stream)" in header
    assert "positional (mean-word-stream)" in header
    assert "**macro avg**" in table and "**short avg (≤ 4)**" in table
    assert (folder / "dep_heads__seed0__summary" / "accuracy_by_distance.png").stat().st_size
    assert (folder / "dep_heads__both__seed0" / "head_counts.npz").exists()


def test_an_edited_treebank_is_scored_again_an_unchanged_one_is_not(tmp_path, tiny_bert, capsys):
    treebank = write_treebank(tmp_path / "trees.conllu", sentences=6)
    args = ("--task-arg", f"dep_heads.treebank={treebank}", "--task-arg", "dep_heads.figures=0")
    run_ok(tmp_path, tiny_bert, *args)
    first = results(tmp_path)["both"]
    run_ok(tmp_path, tiny_bert, *args)
    assert "0 cell(s) run, 1 already finished" in " ".join(capsys.readouterr().out.split())
    write_treebank(treebank, sentences=8, seed=1)
    run_ok(tmp_path, tiny_bert, *args)
    second = results(tmp_path)["both"]
    assert second["cell_id"] != first["cell_id"]
    assert second["task"]["settings"]["coverage"]["sentences"] == 8


def test_heads_picked_on_a_selection_treebank_are_scored_on_the_input(tmp_path, tiny_bert):
    treebank = write_treebank(tmp_path / "test.conllu", seed=0)
    selection = write_treebank(tmp_path / "dev.conllu", seed=5)
    run_ok(
        tmp_path,
        tiny_bert,
        "--task-arg",
        f"dep_heads.treebank={treebank}",
        "--task-arg",
        f"dep_heads.select_treebank={selection}",
        "--task-arg",
        "dep_heads.figures=false",
    )
    cell = results(tmp_path)["both"]
    assert cell["task"]["settings"]["held_out_selection"] == f"…/{tmp_path.name}/dev.conllu"
    assert cell["task"]["settings"]["selection_coverage"]["sentences"] == 24
    assert cell["metrics"]["macro_held_out"]["value"] <= cell["metrics"]["macro"]["value"]


@pytest.fixture(scope="module")
def toy_pipeline(tmp_path_factory) -> tuple[Path, list]:
    """A real spaCy parser trained on trees read from a CoNLL-U file this test writes."""
    pytest.importorskip("spacy", reason="spaCy is not installed: pip install -e '.[parse]'")
    from tests.spacy_toy import toy_treebank, train_parser

    folder = tmp_path_factory.mktemp("toy-parser")
    gold = folder / "gold.conllu"
    gold.write_text("".join("\n".join(conllu_lines(t)) + "\n" for t in toy_treebank()))
    trees = list(iter_conllu(gold))  # the parser learns from a CoNLL-U file, as a user's would
    return train_parser(trees, folder / "toy_parser"), trees


def test_raw_text_is_parsed_by_a_spacy_pipeline_trained_here(tmp_path, tiny_bert, toy_pipeline):
    pipeline, trees = toy_pipeline
    text = tmp_path / "text.txt"
    text.write_text("\n".join(" ".join(t.words) for t in trees[::3]) + "\n")
    run_ok(
        tmp_path,
        tiny_bert,
        "--mode",
        "both,positional",
        "--task-arg",
        f"dep_heads.text={text}",
        "--task-arg",
        f"dep_heads.spacy_model={pipeline}",
        "--task-arg",
        "dep_heads.figures=no",
    )
    cells = results(tmp_path)
    settings = cells["both"]["task"]["settings"]
    assert (
        settings["input_kind"] == "text"
        and settings["spacy_model"] == f"…/{pipeline.parent.name}/{pipeline.name}"
    )
    assert settings["coverage"]["sentences"] == 12
    relations = set(cells["both"]["details"]["table_relations"])
    assert {"det", "nsubj", "dobj"} <= relations  # the parser's (ClearNLP-style) labels
    assert cells["both"]["task"]["data_hash"] == cells["positional"]["task"]["data_hash"]


def test_without_cache_edited_text_is_parsed_again_and_the_parse_kept(
    tmp_path, tiny_bert, toy_pipeline
):
    pipeline, trees = toy_pipeline
    text = tmp_path / "text.txt"
    args = (
        "--no-cache",
        "--task-arg",
        f"dep_heads.text={text}",
        "--task-arg",
        f"dep_heads.spacy_model={pipeline}",
        "--task-arg",
        "dep_heads.figures=no",
    )
    for count in (4, 7):
        text.write_text("\n".join(" ".join(t.words) for t in trees[:count]) + "\n")
        run_ok(tmp_path, tiny_bert, *args)
        cell = results(tmp_path)["both"]
        assert cell["task"]["settings"]["coverage"]["sentences"] == count
    assert any(a.endswith("parsed.conllu") for a in cell["artifacts"])


def test_a_treebank_of_one_word_sentences_has_nothing_to_score(tmp_path, tiny_bert, capsys):
    lone = tmp_path / "lone.conllu"
    lone.write_text("1\tHi\t_\t_\t_\t_\t0\troot\t_\t_\n\n1\tYes\t_\t_\t_\t_\t0\troot\t_\t_\n\n")
    args = ("--task-arg", f"dep_heads.treebank={lone}")
    fails_with(capsys, tmp_path, tiny_bert, "no scorable arc", args=args)


BAD_TREEBANKS = {
    "columns": ("1\tthe\t_\t_\t_\t_\t2\tdet\n2\tdog\t_\t_\t_\t0\troot\t_\t_\n", "10 "),
    "head": ("1\tthe\t_\t_\t_\t_\t2\tdet\t_\t_\n2\tdog\t_\t_\t_\t_\t7\troot\t_\t_\n", "7"),
    "cycle": ("1\tthe\t_\t_\t_\t_\t2\tdet\t_\t_\n2\tdog\t_\t_\t_\t_\t1\tnsubj\t_\t_\n", "cycle"),
}


@pytest.mark.parametrize("case", sorted(BAD_TREEBANKS))
def test_a_malformed_treebank_is_one_line_naming_file_and_line(tmp_path, tiny_bert, capsys, case):
    text, fragment = BAD_TREEBANKS[case]
    treebank = tmp_path / "bad.conllu"
    treebank.write_text("# sent_id = ok\n1\tHi\t_\t_\t_\t_\t0\troot\t_\t_\n\n" + text + "\n")
    line = {"columns": 4, "head": 5, "cycle": 4}[case]  # line 4 is the second sentence's first
    fails_with(
        capsys,
        tmp_path,
        tiny_bert,
        f"bad.conllu:{line}",
        fragment,
        args=("--task-arg", f"dep_heads.treebank={treebank}"),
    )


def test_an_empty_treebank_is_one_line(tmp_path, tiny_bert, capsys):
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    args = ("--task-arg", f"dep_heads.treebank={empty}")
    fails_with(capsys, tmp_path, tiny_bert, "empty.conllu", "no sentences", args=args)


def test_without_data_dir_or_treebank_the_error_says_what_to_pass(tmp_path, tiny_bert, capsys):
    fails_with(capsys, tmp_path, tiny_bert, "dep_heads.treebank=FILE.conllu", "--data-dir")


@pytest.mark.parametrize(
    ("option", "fragment"),
    [
        ("dep_heads.from_word=last", "mean or first"),
        ("dep_heads.relations=some", "collapsed or full"),
        ("dep_heads.spacy_model=no_such_pipeline_xyz", "spacy download"),
    ],
)
def test_bad_options_are_one_line(tmp_path, tiny_bert, capsys, option, fragment):
    text = tmp_path / "text.txt"
    text.write_text("the dog runs\n")
    args = ("--task-arg", f"dep_heads.text={text}", "--task-arg", option)
    fails_with(capsys, tmp_path, tiny_bert, fragment, args=args)


def test_treebank_and_text_together_are_refused(tmp_path, tiny_bert, capsys):
    treebank = write_treebank(tmp_path / "trees.conllu", sentences=2)
    text = tmp_path / "text.txt"
    text.write_text("the dog runs\n")
    args = ("--task-arg", f"dep_heads.treebank={treebank}", "--task-arg", f"dep_heads.text={text}")
    fails_with(capsys, tmp_path, tiny_bert, "not both", args=args)
