"""Named pretraining recipes: the training side of a published setup, as settings.

A recipe fixes how a model is trained, never the model: the architecture stays the zoo's
at the chosen ``--size``, so two positional encodings pretrained under one recipe differ
in their positions alone (docs/pretraining.md, "Recipes", gives each choice its source).
Any setting given on the command line overrides the recipe's value, and the recipe's
name is recorded with the run (``PretrainSettings.preset``), so a resume under another
recipe is refused.

* ``mini`` — the harness's CPU recipe: BERT's objective and schedule at toy scale.
* ``cramming`` — Geiping & Goldstein (2022), "Cramming: training a language model on a
  single GPU in one day", §4.3, final setup (the released code's ``bert-o4``):
  sequences of 128, a global batch of 8,192 reached by accumulation, AdamW with
  β₂ = 0.98 and ε = 1e-12, peak rate 1e-3 on a one-cycle triangle, clipping at 0.5, no
  dropout while pretraining, 25 % masking and sparse prediction.
* ``bert-base`` — Devlin et al. (2019) §A.2 for the steps, batch and length phases (1M
  steps of 256 sequences, 90 % at length 128 and the rest at 512), Ke et al. (2021,
  Table 2, TUPE) for the rest: peak rate 1e-4, 10k warm-up steps then linear decay,
  ε 1e-6, no next-sentence prediction. Ke et al. train every step at 512
  (``--long-fraction 1``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from posharness.base.errors import OptionError


@dataclass(frozen=True)
class Recipe:
    name: str
    source: str
    settings: dict[str, Any]
    description: str
    differences: tuple[str, ...] = field(default=())  # where we knowingly depart from it
    budget_hours: float | None = None  # steps = what fits this time (plan.py) unless given


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe(
            "mini",
            "posharness (docs/pretraining.md): BERT's objective and schedule scaled to a CPU",
            {"steps": 2000, "batch_size": 32, "block_size": 128, "learning_rate": 5e-4},
            "2,000 steps of 32 x 128 tokens, linear warm-up 6 % then decay: hours on a CPU",
        ),
        Recipe(
            "cramming",
            "Geiping & Goldstein 2022, Cramming, §4.3 (final setup; code config bert-o4)",
            {
                "batch_size": 8192,
                "accumulation": 64,
                "block_size": 128,
                "learning_rate": 1e-3,
                "schedule": "one-cycle",
                "adam_beta2": 0.98,
                "adam_epsilon": 1e-12,
                "weight_decay": 0.01,
                "clip": 0.5,
                "mask_probability": 0.25,
                "dropout": False,
                "sparse_prediction": True,
            },
            "one-GPU-day BERT training: batch 8,192 x 128 by accumulation, one-cycle 1e-3, "
            "no dropout, 25 % masking predicted sparsely",
            (
                "the day is turned into a step count once, from the measured warm-up, and "
                "the schedule runs on steps, not on elapsed time, so a resumed run follows "
                "the same curve (--steps overrides the budget)",
                "no batch-size ramp: the global batch is 8,192 from the first step",
                "the zoo's architecture at --size, not Cramming's modified layer",
            ),
            budget_hours=24.0,
        ),
        Recipe(
            "bert-base",
            "Devlin et al. 2019, §A.2 (steps, batch, 128->512 phases); "
            "Ke et al. 2021 (TUPE), Table 2 (rate, warm-up, epsilon, no NSP)",
            {
                "steps": 1_000_000,
                "batch_size": 256,
                "block_size": 128,
                "long_block_size": 512,
                "long_fraction": 0.1,
                "learning_rate": 1e-4,
                "warmup_steps": 10_000,
                "adam_epsilon": 1e-6,
                "weight_decay": 0.01,
                "clip": 1.0,
            },
            "1M steps of 256 sequences, 90 % at 128 tokens and 10 % at 512, rate 1e-4",
            ("no next-sentence prediction (RoBERTa's FULL-SENTENCES packing, as Ke et al.)",),
        ),
    )
}


def recipe(name: str) -> Recipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise OptionError(
            f"--recipe {name!r} does not exist: choose one of {', '.join(RECIPES)}"
        ) from None
