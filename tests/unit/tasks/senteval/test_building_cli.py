"""``posharness build-probes senteval`` end to end: what a build writes, that it is the same
byte for byte for the same sources and seed, that it writes all or nothing, and what it
refuses in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from posharness.tasks.senteval.catalog import BY_NAME, SPLITS, TASKS, TOPCONST_OTHER
from tests.cli_helpers import cli
from tests.conftest import shared_data_dir
from tests.unit.tasks.senteval.test_building import write_corpus

SMALL = ("--sizes", "60,30,30")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


def sources(corpus: dict[str, Path]) -> list[str]:
    return [
        "--ptb",
        str(corpus["ptb"]),
        "--conllu",
        str(corpus["conllu"]),
        "--text",
        str(corpus["text"]),
    ]


def build(out: Path, corpus: dict[str, Path], *extra: str) -> int:
    return cli("build-probes", "senteval", "--out", str(out), *sources(corpus), *SMALL, *extra)


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    lines = [line for line in err.splitlines() if line.startswith("posharness")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def read_task(folder: Path, name: str) -> list[tuple[str, str, str]]:
    text = (folder / BY_NAME[name].file).read_text(encoding="utf-8")
    return [tuple(line.split("\t")) for line in text.splitlines()]  # type: ignore[misc]


def check_probing_folder(folder: Path, tasks: tuple[str, ...]) -> dict:
    """Every file: the official format, splits in order, each split balanced over the
    same classes, labels valid for the task, provenance line for line."""
    manifest = json.loads((folder / "manifest.json").read_text())
    for name in tasks:
        task = BY_NAME[name]
        rows = read_task(folder, name)
        assert rows and all(len(row) == 3 for row in rows), name
        splits = [split for split, _, _ in rows]
        assert splits == sorted(splits, key=SPLITS.index), f"{name}: splits out of order"
        record = manifest["tasks"][name]
        labels = set()
        for split in SPLITS:
            counts = Counter(label for s, label, _ in rows if s == split)
            assert len(set(counts.values())) == 1 and len(counts) >= 2, (name, split, counts)
            assert dict(counts) == {k: v for k, v in record["per_class"][split].items() if v}
            assert sum(counts.values()) == record["sizes"][split]
            labels |= set(counts)
        for _split, label, sentence in rows:
            tokens = sentence.split(" ")
            assert 5 <= len(tokens) <= 28 and all(tokens), (name, sentence)
            if task.labels is not None:
                assert label in task.labels, (name, label)
            elif name == "wc":
                assert label in sentence.lower().split(), (label, sentence)
            else:
                assert label == TOPCONST_OTHER or "_" in label or label.isupper()
        notes = (folder / f"{task.file.rsplit('.', 1)[0]}.provenance.jsonl").read_text()
        assert len(notes.splitlines()) == len(rows), name
    return manifest


def test_a_build_writes_all_ten_tasks_balanced_with_provenance_and_manifest(
    tmp_path: Path, corpus: dict[str, Path]
) -> None:
    assert build(tmp_path / "out", corpus) == 0
    names = tuple(task.name for task in TASKS)
    manifest = check_probing_folder(tmp_path / "out", names)
    assert set(manifest["tasks"]) == set(names)
    assert manifest["seed"] == 0 and manifest["builder"].startswith("posharness-senteval/")
    assert [s["kind"] for s in manifest["sources"]] == ["ptb", "conllu", "text"]
    assert all(len(s["sha256"]) == 64 for s in manifest["sources"])
    wc = manifest["tasks"]["wc"]
    assert wc["classes"] == 1000 and wc["parameters"]["rank_window"] == [2001, 3000]
    assert manifest["tasks"]["sentlen"]["missing_classes"] == ["4", "5"]  # no long sentences
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging


def test_provenance_names_the_source_line_and_the_change(
    tmp_path: Path, corpus: dict[str, Path]
) -> None:
    assert build(tmp_path / "out", corpus, "--tasks", "bshift,somo,coordinv,tense") == 0
    out = tmp_path / "out"
    trees = corpus["ptb"].read_text().splitlines()
    for name, stem in (("bshift", "bigram_shift"), ("somo", "odd_man_out")):
        rows = read_task(out, name)
        notes = [
            json.loads(line) for line in (out / f"{stem}.provenance.jsonl").read_text().splitlines()
        ]
        for (_split, label, sentence), note in zip(rows, notes, strict=True):
            assert note["source"].endswith(("trees.mrg", "tiny.conllu", "words.txt"))
            assert len(note["sha256"]) == 16 and note["line"] >= 1
            if label in ("O",):
                assert note["change"] is None
                continue
            if note["source"].endswith("trees.mrg"):
                original = _leaves(trees[note["line"] - 1])
            else:
                continue
            changed = sentence.split(" ")
            assert len(changed) == len(original)
            differs = [i for i, (a, b) in enumerate(zip(original, changed, strict=True)) if a != b]
            if name == "bshift":  # exactly one adjacent pair, swapped
                i, j = note["change"]["swapped"]
                assert differs == [i, j] and j == i + 1
                assert (changed[i], changed[j]) == (original[j], original[i])
            else:  # exactly one word, replaced by the recorded replacement
                position = note["change"]["position"]
                assert differs == [position]
                assert changed[position] == note["change"]["replacement"]
                assert original[position] == note["change"]["word"]
    coordinv = read_task(out, "coordinv")
    assert {label for _, label, _ in coordinv} == {"I", "O"}


def _leaves(bracketed: str) -> list[str]:
    import nltk

    return nltk.Tree.fromstring(bracketed).leaves()


def test_same_sources_and_seed_give_identical_bytes(
    tmp_path: Path, corpus: dict[str, Path]
) -> None:
    assert build(tmp_path / "a", corpus, "--seed", "7") == 0
    assert build(tmp_path / "b", corpus, "--seed", "7") == 0
    assert build(tmp_path / "c", corpus, "--seed", "8") == 0
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (tmp_path / "a" / "bigram_shift.txt").read_bytes() != (
        tmp_path / "c" / "bigram_shift.txt"
    ).read_bytes()


def test_hash_randomisation_does_not_change_the_files(
    tmp_path: Path, corpus: dict[str, Path]
) -> None:
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"out{hash_seed}"
        result = _subprocess_build(
            out, corpus, {"PYTHONHASHSEED": hash_seed}, "--tasks", "wc,somo,tense"
        )
        assert result.returncode == 0, result.stderr
        outputs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outputs[0] == outputs[1]


def _subprocess_build(
    out: Path, corpus: dict[str, Path], env: dict[str, str], *extra: str
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "posharness", "build-probes", "senteval", "--out", str(out)]
    return subprocess.run(
        [*command, *sources(corpus), *SMALL, *extra],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_build_killed_between_files_leaves_nothing_and_the_rerun_cleans_up(
    tmp_path: Path, corpus: dict[str, Path]
) -> None:
    out = tmp_path / "out"
    killed = _subprocess_build(out, corpus, {"POSHARNESS_KILL_AT": "senteval-file:3"})
    assert killed.returncode == -9
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.ph-")]  # staging left
    assert build(out, corpus) == 0
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # swept


def test_a_killed_rebuild_keeps_the_previous_build_whole(
    tmp_path: Path, corpus: dict[str, Path]
) -> None:
    out = tmp_path / "out"
    assert build(out, corpus, "--seed", "1") == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    killed = _subprocess_build(
        out, corpus, {"POSHARNESS_KILL_AT": "senteval-file:11"}, "--seed", "2"
    )
    assert killed.returncode == -9
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert build(out, corpus, "--seed", "2") == 0  # a previous build is replaced
    assert json.loads((out / "manifest.json").read_text())["seed"] == 2


def test_a_task_that_cannot_be_built_stops_the_build_before_any_file(
    tmp_path: Path, corpus: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    text_only = ["--text", str(corpus["text"])]
    code = cli(
        "build-probes",
        "senteval",
        "--out",
        str(out),
        *text_only,
        *SMALL,
        "--tasks",
        "sentlen,treedepth",
    )
    assert code == 2
    assert one_line_error(capsys) == (
        "posharness: error: treedepth needs constituency parses: none of the sources has "
        "them (pass --snli FILE with parses or --ptb FILE)"
    )
    assert not out.exists()
    # without --tasks all ten are due, so the same sources fail the same way
    assert cli("build-probes", "senteval", "--out", str(out), *text_only, *SMALL) == 2
    assert "needs" in one_line_error(capsys) and not out.exists()
    # CoNLL-U alone has parses but no constituency trees
    conllu_only = ["--conllu", str(corpus["conllu"]), "--tasks", "topconst"]
    assert cli("build-probes", "senteval", "--out", str(out), *conllu_only) == 2
    assert "topconst needs constituency parses" in one_line_error(capsys)


def test_a_task_with_too_few_sentences_stops_the_build(
    tmp_path: Path, corpus: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli(
        "build-probes", "senteval", "--out", str(tmp_path / "out"),
        "--conllu", str(corpus["conllu"]), "--tasks", "tense,coordinv",
    )  # fmt: skip
    assert code == 2
    assert one_line_error(capsys).startswith("posharness: error: tense: too few sentences qualify")
    assert not (tmp_path / "out").exists()


def test_snli_sentences_and_parses_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.snli_parsed import snli_records, write_jsonl

    snli = write_jsonl(tmp_path / "snli.jsonl", snli_records(120, seed=0, prefix="t"))
    out = tmp_path / "out"
    assert (
        cli(
            "build-probes",
            "senteval",
            "--out",
            str(out),
            "--snli",
            str(snli),
            "--tasks",
            "bshift,sentlen",
            *SMALL,
        )
        == 0
    )
    notes = [
        json.loads(line)
        for line in (out / "bigram_shift.provenance.jsonl").read_text().splitlines()
    ]
    assert all(note["id"].startswith("t") and note["sentence"] in (1, 2) for note in notes)
    unparsed = tmp_path / "unparsed.jsonl"
    rows = [{"sentence1": "A man plays a red guitar on stage .", "sentence2": "A man plays ."}]
    unparsed.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code = cli(
        "build-probes",
        "senteval",
        "--out",
        str(tmp_path / "o2"),
        "--snli",
        str(unparsed),
        "--tasks",
        "topconst",
    )
    assert code == 2
    assert one_line_error(capsys).endswith(f"({unparsed} has no sentence1_parse)")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--seed", "-1"), "--seed -1: must not be negative"),
        (
            ("--tasks", "bshift,wordcontent"),
            "--tasks wordcontent: unknown SentEval probing task; known: sentlen, wc,",
        ),
        (("--sizes", "100,10"), "--sizes 100,10: give three sizes TRAIN,DEV,TEST"),
        (("--sizes", "100,0,10"), "--sizes 100,0,10: every size must be positive"),
        (("--max-text-sentences", "0"), "--max-text-sentences 0: must be positive"),
    ],
)
def test_bad_options_are_one_line(
    tmp_path: Path,
    corpus: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    args: tuple,
    message: str,
) -> None:
    code = cli("build-probes", "senteval", "--out", str(tmp_path / "out"), *sources(corpus), *args)
    assert code == 2
    assert message in one_line_error(capsys)


def test_no_source_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("build-probes", "senteval", "--out", str(tmp_path / "out")) == 2
    assert "no source: pass at least one of --snli, --ptb, --conllu, --text FILE" in one_line_error(
        capsys
    )


def test_bad_sources_name_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "out")
    missing = tmp_path / "nothing.mrg"
    assert cli("build-probes", "senteval", "--out", out, "--ptb", str(missing)) == 2
    assert f"--ptb {missing}: no such file" in one_line_error(capsys)
    broken = tmp_path / "broken.mrg"
    broken.write_text(
        "(ROOT (S (NP (NN a)) (VP (VBZ is))))\n\n(ROOT (S (NP (NN b)) (VP (VBZ is)))\n"
    )
    assert (
        cli("build-probes", "senteval", "--out", out, "--ptb", str(broken), "--tasks", "bshift")
        == 2
    )
    assert f"{broken}:3: not a bracketed tree (unbalanced '('" in one_line_error(capsys)
    bad_conllu = tmp_path / "bad.conllu"
    bad_conllu.write_text("1\tA\ta\tDET\tDT\t_\t0\troot\t_\n")
    assert (
        cli(
            "build-probes",
            "senteval",
            "--out",
            out,
            "--conllu",
            str(bad_conllu),
            "--tasks",
            "bshift",
        )
        == 2
    )
    assert f"{bad_conllu}:1: 9 tab-separated fields, CoNLL-U needs 10" in one_line_error(capsys)
    bad_snli = tmp_path / "bad.jsonl"
    bad_snli.write_text('{"sentence1": "A b c d e .", "sentence2": "A b c d e ."}\n{not json\n')
    assert (
        cli("build-probes", "senteval", "--out", out, "--snli", str(bad_snli), "--tasks", "bshift")
        == 2
    )
    assert f"{bad_snli}:2: not a JSON line" in one_line_error(capsys)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Caf\xe9 au lait is served here .\n".encode("latin-1"))
    assert (
        cli("build-probes", "senteval", "--out", out, "--text", str(latin), "--tasks", "bshift")
        == 2
    )
    assert f"{latin}:1: not UTF-8" in one_line_error(capsys)
    assert not (tmp_path / "out").exists()


def test_an_out_folder_with_other_files_is_refused(
    tmp_path: Path, corpus: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert build(out, corpus) == 2
    assert "is not empty and holds no previous build (manifest.json)" in one_line_error(capsys)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert build(empty, corpus, "--tasks", "sentlen") == 0


def test_the_text_cap_is_exact(tmp_path: Path, corpus: dict[str, Path]) -> None:
    out = tmp_path / "out"
    args = ["--text", str(corpus["text"]), "--tasks", "bshift", "--max-text-sentences", "1234"]
    assert cli("build-probes", "senteval", "--out", str(out), *args, *SMALL) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sources"][0]["sentences_read"] == 1234


# -- real data ---------------------------------------------------------------------------
@pytest.mark.integration
def test_all_ten_tasks_build_from_the_shared_corpora(tmp_path: Path) -> None:
    data = shared_data_dir()
    needed = [
        ("--snli", "snli/snli_1.0/snli_1.0_dev.jsonl"),
        ("--snli", "snli/train_subset_1pct/snli_1.0_train_0.01.jsonl"),
        ("--conllu", "ud_english_ewt/en_ewt-ud-dev.conllu"),
        ("--conllu", "ud_english_ewt/en_ewt-ud-test.conllu"),
        ("--text", "wikitext-2/wiki.valid.tokens"),
        ("--text", "wikitext-2/wiki.test.tokens"),
        *(("--text", f"wikipedia_en_partial/AA/wiki_0{i}") for i in range(6)),
    ]
    if data is None or not all((data / path).is_file() for _, path in needed):
        pytest.skip(
            "the SNLI, UD EWT, WikiText-2 and Wikipedia copies under ../shared/data are absent"
        )
    args = [arg for flag, path in needed for arg in (flag, str(data / path))]
    started = time.monotonic()
    out = tmp_path / "probing"
    assert cli("build-probes", "senteval", "--out", str(out), *args, "--sizes", "2000,400,400") == 0
    elapsed = time.monotonic() - started
    names = tuple(task.name for task in TASKS)
    manifest = check_probing_folder(out, names)
    for name in ("sentlen", "bshift", "somo", "subjnum"):  # full, up to rounding by classes
        classes = manifest["tasks"][name]["classes"]
        full = {
            split: size // classes * classes
            for split, size in (("tr", 2000), ("va", 400), ("te", 400))
        }
        assert manifest["tasks"][name]["sizes"] == full, name
    for name in names:
        assert min(manifest["tasks"][name]["sizes"].values()) >= 20, name
    assert manifest["tasks"]["topconst"]["classes"] == 20
    assert manifest["tasks"]["treedepth"]["classes"] == 8
    # the task reader takes every built file as it takes the official ones
    from posharness.tasks.senteval.probing_files import read_probing_file

    for name in names:
        read_probing_file(BY_NAME[name], out / BY_NAME[name].file)
    assert elapsed < 120, f"build took {elapsed:.0f} s"


def test_the_number_of_workers_does_not_change_the_files(
    tmp_path: Path, corpus: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from posharness.tasks.senteval.building import sources

    monkeypatch.setattr(sources, "TEXT_CHUNK_CHARS", 8_000)  # many jobs, several shards
    outputs = []
    for cpus in (1, 2, 3):
        monkeypatch.setattr(sources.os, "cpu_count", lambda cpus=cpus: cpus)
        out = tmp_path / f"cpus{cpus}"
        assert build(out, corpus, "--tasks", "wc,bshift,somo") == 0
        outputs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outputs[0] == outputs[1] == outputs[2]
