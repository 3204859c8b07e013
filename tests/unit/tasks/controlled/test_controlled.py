"""Chen et al.'s controlled experiment (tasks/controlled): the encoder is Eq. 8's table and
nothing else, the vectors file is read by gensim with one-line errors, and a 3-setting
sweep on tiny written data runs end to end (results, statements, tables, figure)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from posharness.base.errors import OptionError

pytest.importorskip("gensim")

from posharness.models.zoo.encoder.attenuation import attenuation_matrix  # noqa: E402
from posharness.tasks.controlled import encoder as enc  # noqa: E402
from posharness.tasks.controlled.vectors import detect_format, load_vectors  # noqa: E402

WORDS = ["good", "bad", "fine", "awful", "great", "poor", "film", "plot", "story", "actor"]


def _write_data(root: Path) -> Path:
    """A tiny MR-shaped folder: positive sentences use good words, negative ones bad."""
    rng = np.random.default_rng(0)
    (root / "MR").mkdir(parents=True)
    for name, words in (("rt-polarity.pos", WORDS[0:5:2]), ("rt-polarity.neg", WORDS[1:6:2])):
        lines = [
            " ".join(rng.choice(list(words) + WORDS[6:], size=rng.integers(3, 9)))
            for _ in range(40)
        ]
        (root / "MR" / name).write_text("\n".join(lines) + "\n")
    return root


def _write_glove(path: Path, dim: int = 6) -> Path:
    rng = np.random.default_rng(1)
    lines = [w + " " + " ".join(f"{v:.3f}" for v in rng.normal(size=dim)) for w in WORDS[:-1]]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_attention_is_the_eq8_table_it_was_fitted_to():
    setting = enc.fit_setting(0.3, 0.8, 16)
    table = enc.attention_tables([setting])[0]
    expected = attenuation_matrix(16, setting.w, setting.s)
    assert torch.allclose(table, torch.from_numpy(expected).float())
    assert setting.locality == pytest.approx(0.3, abs=1e-6)
    assert setting.symmetry == pytest.approx(0.8, abs=1e-6)
    # Listing 2: padded keys zeroed, nothing renormalised
    masked = enc.attention_for(table[None], n=5, max_length=16)[0]
    assert torch.equal(masked[:, :5], table[:, :5]) and not masked[:, 5:].any()


def test_another_target_changes_only_the_attention():
    rng = np.random.default_rng(2)
    sentences = [rng.normal(size=(n, 4)).astype(np.float32) for n in (3, 5, 5, 8)]
    a, b = enc.fit_setting(0.4, 1.0, 8), enc.fit_setting(0.7, 1.0, 8)
    both = enc.encode(enc.attention_tables([a, b]), sentences)
    for k, setting in enumerate((a, b)):
        table = enc.attention_tables([setting])[0]
        alone = enc.encode(table[None], sentences)[0]
        assert torch.equal(both[k], alone)
        for i, x in enumerate(sentences):  # h = pe @ x, max over positions
            n = len(x)
            manual = (table[:n, :n] @ torch.from_numpy(x)).amax(0)
            assert torch.allclose(alone[i], manual, atol=1e-6)
    assert (a.w, a.s) != (b.w, b.s) and a.s == b.s == 1.0


def test_unreachable_targets_name_the_reachable_range():
    with pytest.raises(
        OptionError, match=r"locality 0.01 is unreachable.*pick one in \(0\.\d+, 1\)"
    ):
        enc.fit_setting(0.01, 1.0, 16)
    with pytest.raises(OptionError, match=r"symmetry 0.0 is unreachable.*pick one in \("):
        enc.fit_setting(0.3, 0.0, 16)


def test_vectors_files_in_each_format_and_bad_ones_in_one_line(tmp_path):
    from gensim.models import KeyedVectors

    glove = _write_glove(tmp_path / "tiny.txt")
    assert detect_format(glove) == "glove"
    kv = load_vectors(glove)
    assert kv.vector_size == 6 and len(kv) == len(WORDS) - 1
    for name, binary in (("tiny.vec", False), ("tiny.bin", True)):
        kv.save_word2vec_format(str(tmp_path / name), binary=binary)
        again = load_vectors(tmp_path / name)
        assert np.allclose(again["good"], kv["good"], atol=1e-3)
    assert detect_format(tmp_path / "tiny.vec") == "word2vec"
    assert load_vectors(glove) is load_vectors(glove)  # read once per process
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2 3\nb 1 2\nc 1 2 3\n")
    with pytest.raises(OptionError, match=r"bad.txt, line 2: 2 numbers .* expected 3"):
        load_vectors(bad)
    words = tmp_path / "words.txt"
    words.write_text("a 1 x 3\n")
    with pytest.raises(OptionError, match=r"words.txt, line 1: a value is not a number"):
        load_vectors(words)
    assert isinstance(kv, KeyedVectors)


def test_a_three_setting_sweep_writes_results_statements_and_tables(tmp_path):
    from click.testing import CliRunner

    from posharness.tasks.controlled.commands import controlled

    data = _write_data(tmp_path / "data" / "senteval" / "downstream")
    vectors = _write_glove(tmp_path / "tiny.txt")
    folder = tmp_path / "study"
    args = ["sweep", "--vectors", str(vectors), "--out", str(folder), "--data-dir",
            str(tmp_path / "data")]  # fmt: skip
    for pair in ("settings=3", "datasets=mr", "repeats=2", "epochs=2", "max_length=12",
                 "symmetry_locality=0.4", "symmetry_min=0.5"):  # fmt: skip
        args += ["--task-arg", pair]
    run = CliRunner().invoke(controlled, args)
    assert run.exit_code == 0, run.output
    result = json.loads((folder / "results" / "controlled.json").read_text())
    assert np.asarray(result["curves"]["mr/locality"]["test_accuracy"]).shape == (2, 3)
    assert result["datasets"]["mr"]["coverage"]["types"] == pytest.approx(0.9)
    assert result["datasets"]["mr"]["coverage_flag"]  # 'actor' has no vector
    statements = (folder / "tables" / "controlled.statements.md").read_text()
    assert "accuracy increases with locality" in statements and "tiny.txt vectors" in statements
    assert (folder / "tables" / "controlled.png").stat().st_size > 0
    before = (folder / "tables" / "controlled.mr.symmetry.tex").read_text()
    (folder / "tables" / "controlled.mr.symmetry.tex").unlink()
    again = CliRunner().invoke(controlled, ["report", str(folder)])
    assert again.exit_code == 0, again.output
    assert (folder / "tables" / "controlled.mr.symmetry.tex").read_text() == before
    assert data.is_dir()


def test_the_statements_read_their_intervals():
    from posharness.tasks.controlled.statements import (
        increases_with,
        levels_off,
        matters_only_above,
    )

    rng = np.random.default_rng(3)
    x = np.linspace(0.05, 0.95, 30)
    noise = rng.normal(scale=0.002, size=(5, 30))
    assert increases_with(x, 0.7 + 0.1 * x + noise)["verdict"] == "reproduced"
    assert increases_with(x, 0.7 - 0.1 * x + noise)["verdict"] == "not reproduced"
    knee = 0.7 + 0.3 * np.minimum(x, 0.3) + noise
    assert levels_off(x, knee)["verdict"] == "reproduced"
    assert levels_off(x, 0.7 + 0.1 * x + noise)["verdict"] != "reproduced"
    hinge = 0.7 + 0.3 * np.maximum(x - 0.65, 0) + noise
    assert matters_only_above(x, hinge)["verdict"] == "reproduced"
    assert matters_only_above(x, 0.7 + 0.1 * x + noise)["verdict"] == "not reproduced"
