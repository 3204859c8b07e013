"""Named recipes and what they switch on (issue 30, parts 3 and 4): the one-cycle
schedule, sparse prediction, pretraining without dropout, BERT's 128 → 512 phases, and
the plan ``posharness pretrain`` prints before it starts."""

from __future__ import annotations

import json

import pytest
import torch

from posharness.cli import main
from posharness.models.pretrain.loop import PretrainSettings, pretrain
from posharness.models.pretrain.optimizer import one_cycle_schedule
from posharness.models.pretrain.phases import Phase, phases, tokens_seen
from posharness.models.pretrain.recipes import RECIPES
from tests.unit.models.pretrain.test_pretrain_loop import (
    dropout_free_bert,
    losses,
    settings,
    tiny_bert,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py


def zoo_model(vocabulary: int, pad: int = 0):
    from posharness.models.zoo.encoder import PEForMaskedLM, config_for

    return PEForMaskedLM(config_for("tupe-r", "tiny", vocab_size=vocabulary, pad_token_id=pad))


def test_the_one_cycle_rate_rises_from_a_quarter_to_the_peak_at_75_percent_then_to_zero():
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=1e-3)
    schedule = one_cycle_schedule(optimizer, 100)
    rates = []
    for _ in range(100):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        schedule.step()
    assert rates[0] == pytest.approx(0.25e-3)
    assert max(rates) == pytest.approx(1e-3) and rates.index(max(rates)) == 75
    assert rates[90] == pytest.approx(0.4e-3)  # (1 - 0.9) / 0.25 of the peak
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.0, abs=1e-12)  # step 100
    assert all(a < b for a, b in zip(rates[:75], rates[1:76], strict=True))


def test_sparse_prediction_gives_the_dense_loss_and_gradients():
    torch.manual_seed(0)
    model = zoo_model(50).eval()  # no dropout: both passes see the same network
    ids = torch.randint(5, 50, (3, 12))
    labels = torch.full_like(ids, -100)
    labels[:, ::4] = ids[:, ::4]
    dense = model(input_ids=ids, labels=labels)
    dense.loss.backward()
    dense_grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    sparse = model(input_ids=ids, labels=labels, predict_only_masked=True)
    sparse.loss.backward()
    assert sparse.logits.shape == (9, 50)  # 3 rows x positions 0, 4, 8
    torch.testing.assert_close(sparse.loss, dense.loss)
    for name, grad in dense_grads.items():
        torch.testing.assert_close(dict(model.named_parameters())[name].grad, grad)


def test_phases_split_the_steps_and_count_the_tokens():
    plan = phases(10, 16, 32, 0.2)
    assert plan == [Phase(1, 8, 16), Phase(9, 10, 32)]
    assert tokens_seen(plan, 10, 4) == 8 * 4 * 16 + 2 * 4 * 32
    assert tokens_seen(plan, 5, 4) == 5 * 4 * 16
    assert phases(10, 16, None, 0.2) == [Phase(1, 10, 16)]
    assert phases(10, 16, 32, 1.0) == [Phase(1, 10, 32)]


def test_a_two_phase_run_trains_on_longer_blocks_for_its_last_steps(tokenizer, corpus, tmp_path):
    seen = []

    def build(vocabulary):
        model = tiny_bert(vocabulary)
        forward = model.forward

        def recording(**batch):
            seen.append(batch["input_ids"].shape[1])
            return forward(**batch)

        model.forward = recording
        return model

    two_phases = settings(long_block_size=32, long_fraction=0.5)
    outcome = pretrain(build, tokenizer, corpus, tmp_path / "run", two_phases, None, tmp_path / "c")
    assert seen == [16, 16, 16, 32, 32, 32]
    state = json.loads((outcome.checkpoint.parent / "checkpoint-6/trainer_state.json").read_text())
    assert state["tokens_seen"] == 3 * 8 * 16 + 3 * 8 * 32
    prepared = sorted(p.name.split("-")[0] for p in (tmp_path / "c").iterdir() if p.is_dir())
    assert prepared == ["blocks16", "blocks32"]  # each phase's corpus, prepared once


def test_pretraining_without_dropout_is_training_a_dropout_free_model(tokenizer, corpus, tmp_path):
    reference = pretrain(dropout_free_bert, tokenizer, corpus, tmp_path / "a", settings())
    switched = pretrain(tiny_bert, tokenizer, corpus, tmp_path / "b", settings(dropout=False))
    with_dropout = pretrain(tiny_bert, tokenizer, corpus, tmp_path / "c", settings())
    assert losses(switched.log_path) == losses(reference.log_path)
    assert losses(with_dropout.log_path) != losses(reference.log_path)


def test_every_recipe_is_a_valid_set_of_settings_with_a_source():
    for recipe in RECIPES.values():
        values = {"steps": 1} | recipe.settings
        PretrainSettings(**values)  # each key is a setting, each value allowed
        assert recipe.source and recipe.description
    assert RECIPES["cramming"].budget_hours == 24
    assert RECIPES["cramming"].vocab_size == 32768  # 2^15 WordPiece pieces
    assert "float16" in RECIPES["cramming"].precision
    assert RECIPES["bert-base"].settings["long_block_size"] == 512
    # Ke et al., Table 2: warm-up ratio 0.01, their 10k of 1M steps.
    full = PretrainSettings(**RECIPES["bert-base"].settings)
    assert full.warmup == 10_000


def run_cli(capsys, *args):
    with pytest.raises(SystemExit) as stop:
        main(["pretrain", *args])
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


def test_a_recipe_prints_its_plan_and_the_command_line_overrides_it(
    capsys, corpus, tmp_path, monkeypatch
):
    monkeypatch.setenv("POSHARNESS_RUNS", str(tmp_path / "runs"))
    common = ["--model", "bert-a", "--size", "tiny", "--corpus", str(corpus), "--device", "cpu"]
    common += ["--vocab-size", "100", "--prepared-dir", str(tmp_path / "corpora")]
    code, out, _ = run_cli(
        capsys, *common, "--recipe", "cramming", "--plan-only", "--out", str(tmp_path / "c"),
        "--batch-size", "64", "--accumulation", "4", "--block-size", "16",
    )  # fmt: skip
    assert code == 0, out
    assert "recipe: cramming;" in out
    assert "global batch 64 = 16 per device x 4 accumulated x 1 process(es)" in out
    assert "estimated time on cpu: 24.0 h" in out  # the budget's steps fill the day
    assert "measured at fp32, eager" in out
    assert "budget: 24 device-hours in total" in out and "1 process(es): 24.0 h" in out
    assert "(cramming's: 32,768)" in out  # the recipe's vocabulary, more than the toy has
    assert "precision: fp32; cramming's source: float16 autocast with loss scaling" in out
    assert not list((tmp_path / "c").glob("checkpoint-*"))  # nothing trained

    run = tmp_path / "m"
    code, out, err = run_cli(
        capsys, *common, "--recipe", "mini", "--steps", "3", "--batch-size", "8",
        "--block-size", "16", "--save-every", "3", "--out", str(run),
    )  # fmt: skip
    assert code == 0, err
    log = json.loads((run / "loss_log.json").read_text())
    assert log["settings"]["preset"] == "mini" and log["settings"]["steps"] == 3
    assert log["settings"]["learning_rate"] == 5e-4  # the recipe's
    assert "recipe: mini; 3 steps" in err  # the plan, on stderr before training

    code, _, err = run_cli(
        capsys, *common, "--recipe", "cramming", "--steps", "3", "--batch-size", "8",
        "--accumulation", "1", "--block-size", "16", "--out", str(run),
    )  # fmt: skip
    assert code == 2
    assert "another recipe (mini there, cramming here), learning_rate" in err
    assert len(err.strip().splitlines()) == 1  # refused before the plan's warm-up


def test_a_recipe_that_does_not_exist_lists_those_that_do(capsys, corpus):
    code, _, err = run_cli(capsys, "--model", "bert-a", "--corpus", str(corpus), "--recipe", "x")
    assert code == 2
    assert "mini, cramming, bert-base" in err
    code, _, err = run_cli(capsys, "--model", "bert-a", "--corpus", str(corpus))
    assert "--steps is required without --recipe" in err


BERT_BASE_SMALL = ["--batch-size", "8", "--block-size", "16", "--long-block-size", "32"]


def test_bert_base_takes_steps_and_warms_up_in_proportion(capsys, corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("POSHARNESS_RUNS", str(tmp_path / "runs"))
    common = ["--model", "bert-a", "--size", "tiny", "--corpus", str(corpus), "--device", "cpu"]
    common += ["--vocab-size", "100", "--prepared-dir", str(tmp_path / "corpora")]
    common += ["--recipe", "bert-base", "--plan-only", *BERT_BASE_SMALL]
    code, out, err = run_cli(capsys, *common, "--steps", "100", "--out", str(tmp_path / "a"))
    assert code == 0, err
    assert "recipe: bert-base; 100 steps (90 steps x 16 tokens then 10 steps x 32 tokens)" in out
    assert "learning rate: 1 warm-up step(s) up to 0.0001, then linear decay to 0" in out
    code, out, err = run_cli(
        capsys, *common, "--steps", "100", "--warmup-steps", "7", "--out", str(tmp_path / "b")
    )
    assert code == 0, err
    assert "learning rate: 7 warm-up step(s) up to 0.0001" in out


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (["--warmup-steps", "-1"], "--warmup-steps -1: must be at least 0 and less than --steps"),
        (["--warmup-steps", "100"], "--warmup-steps 100: must be at least 0 and less than"),
        (["--warmup-steps", "5", "--warmup-ratio", "0.1"], "both given: keep one"),
    ],
)
def test_a_warm_up_that_does_not_fit_is_one_line(capsys, corpus, tmp_path, given, says):
    code, _, err = run_cli(
        capsys, "--model", "bert-a", "--corpus", str(corpus), "--recipe", "bert-base",
        "--steps", "100", "--out", str(tmp_path / "x"), *given,
    )  # fmt: skip
    assert code == 2
    assert says in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()  # refused before the tokenizer or corpus


def test_a_bert_base_run_of_a_few_steps_trains_with_its_scaled_warm_up(
    capsys, corpus, tmp_path, monkeypatch
):
    monkeypatch.setenv("POSHARNESS_RUNS", str(tmp_path / "runs"))
    run = tmp_path / "run"
    code, _, err = run_cli(
        capsys, "--model", "bert-a", "--size", "tiny", "--corpus", str(corpus),
        "--device", "cpu", "--vocab-size", "100", "--prepared-dir", str(tmp_path / "corpora"),
        "--recipe", "bert-base", "--steps", "4", "--log-every", "1", "--out", str(run),
        *BERT_BASE_SMALL,
    )  # fmt: skip
    assert code == 0, err
    log = json.loads((run / "loss_log.json").read_text())
    assert log["settings"]["warmup_ratio"] == 0.01 and log["settings"]["warmup_steps"] is None
    rates = [record["learning_rate"] for record in log["records"]]
    # round(0.01 x 4) = 0 warm-up steps: the peak at once, then linear decay to zero.
    assert rates == pytest.approx([1e-4, 0.75e-4, 0.5e-4, 0.25e-4])


def test_dropout_and_sparse_prediction_are_options_that_override_a_recipe(
    capsys, corpus, tmp_path, monkeypatch
):
    monkeypatch.setenv("POSHARNESS_RUNS", str(tmp_path / "runs"))
    common = ["--model", "bert-a", "--size", "tiny", "--corpus", str(corpus), "--device", "cpu"]
    common += ["--vocab-size", "100", "--prepared-dir", str(tmp_path / "corpora")]
    common += ["--steps", "2", "--batch-size", "4", "--block-size", "16", "--save-every", "2"]
    for name, args, expected in (
        ("plain", [], (True, False)),
        ("switched", ["--dropout", "off", "--sparse-prediction", "on"], (False, True)),
        ("cramming", ["--recipe", "cramming", "--accumulation", "1"], (False, True)),
        ("back", ["--recipe", "cramming", "--accumulation", "1", "--dropout", "on",
                  "--sparse-prediction", "off"], (True, False)),
    ):  # fmt: skip
        code, _, err = run_cli(capsys, *common, *args, "--out", str(tmp_path / name))
        assert code == 0, err
        settings = json.loads((tmp_path / name / "loss_log.json").read_text())["settings"]
        assert (settings["dropout"], settings["sparse_prediction"]) == expected, name
    code, _, err = run_cli(capsys, *common, "--dropout", "no", "--out", str(tmp_path / "x"))
    assert code == 2 and "'no' is not one of 'on', 'off'" in err
