"""Named pretraining recipes: the training side of a published setup, as settings.

A recipe fixes how a model is trained, never the model: the architecture stays the zoo's
at the chosen ``--size``, so two positional encodings pretrained under one recipe differ
in their positions alone (docs/pretraining.md, "Recipes", gives each choice its source).
Any setting given on the command line overrides the recipe's value, and the recipe's
name is recorded with the run (``PretrainSettings.preset``), so a resume under another
recipe is refused.

* ``mini`` — the harness's CPU recipe: BERT's objective and schedule at toy scale.
* ``cramming`` — Geiping & Goldstein (2023), "Cramming: training a language model on a
  single GPU in one day" (final setup; the released code's ``bert-o4``): sequences of
  128, a global batch of 8,192 reached by accumulation, AdamW with β₂ = 0.98 and
  ε = 1e-12, peak rate 1e-3 on a one-cycle triangle, clipping at 0.5, no dropout while
  pretraining, 25 % masking and sparse prediction, a WordPiece vocabulary of 32,768
  (2^15) when the tokenizer is trained here. Its budget is *one GPU for 24 hours* (the
  released README's "Rules for Cramming": "Training proceeds on a single GPU for 24
  hours"), so it is a total of 24 device-hours, shared by the processes of a launch: N
  processes get 24/N hours each, the steps one device does in a day (``workflow._plan``).
  Its precision (float16 autocast with loss scaling, TF32 matmuls: the released
  ``impl/torch-default.yaml`` and ``impl/_default.yaml``) is named, not set: ``--fp16``
  turns it on where there is CUDA (``Recipe.precision``).
* ``cpu-hour`` — the smallest setup issue 41's search found at which models learn where to
  attend on 2 CPU cores (docs/pretraining.md records every run): with ``--size narrow``,
  a TUPE-R model sends 0.96 of some heads' weight to the next or previous token after 500
  steps (the time a model takes: ``base.timings.CPU_HOUR_ALONE``). Sparse prediction gives the
  dense head's loss and gradients (a test compares them), so it only saves time.
* ``bert-base`` — Devlin et al. (2019) §A.2 for the steps, batch and length phases (1M
  steps of 256 sequences, 90 % at length 128 and the rest at 512), Ke et al. (2021,
  Table 2, TUPE) for the rest: peak rate 1e-4, a warm-up ratio of 0.01 (their 10k steps
  of 1M; so ``--steps N`` warms up for N/100, and ``--warmup-steps`` sets it) then linear decay,
  ε 1e-6, no next-sentence prediction. Ke et al. train every step at 512
  (``--long-fraction 1``).

The Cramming paper's text is not in /work/shared/science/papers; its values here are
read from the authors' released configuration (github.com/JonasGeiping/cramming:
``data/c4-subset-processed.yaml``: ``tokenizer: WordPiece``, ``vocab_size: 32768``;
``impl/torch-default.yaml``: ``mixed_precision: True``, ``grad_scaling: True``,
``mixed_precision_target_dtype: float16``; ``impl/_default.yaml``: ``tf32_allowed:
True``) and its README's rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from posharness.base.errors import OptionError
from posharness.base.timings import CPU_HOUR_ALONE, CPU_HOUR_SHARED


@dataclass(frozen=True)
class Recipe:
    name: str
    source: str
    settings: dict[str, Any]
    description: str
    differences: tuple[str, ...] = field(default=())  # where we knowingly depart from it
    # Device-hours in total, shared by a launch's processes: steps = what one device does
    # in this time (workflow._plan) unless --steps is given.
    budget_hours: float | None = None
    vocab_size: int | None = None  # --vocab-size when the tokenizer is trained here
    precision: str = ""  # the source's numeric precision, where the recipe does not set it


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
            "Geiping & Goldstein 2023, Cramming (final setup; released code config bert-o4)",
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
            "no dropout, 25 % masking predicted sparsely, a 32,768-piece WordPiece",
            (
                "the day is turned into a step count once, from the measured warm-up, and "
                "the schedule runs on steps, not on elapsed time, so a resumed run follows "
                "the same curve (--steps overrides the budget)",
                "the day is one device's: a launch of N processes shares it (24/N hours "
                "each), so it trains the steps one device would, not N days' worth",
                "no batch-size ramp: the global batch is 8,192 from the first step",
                "the zoo's architecture at --size, not Cramming's modified layer",
                "precision is named, not set: fp32 unless --fp16 (Cramming's float16 "
                "autocast with loss scaling) or --bf16; TF32 matmuls are not switched on",
            ),
            budget_hours=24.0,
            vocab_size=32768,
            precision="float16 autocast with loss scaling, TF32 matmuls (add --fp16 on CUDA)",
        ),
        Recipe(
            "bert-base",
            "Devlin et al. 2019, §A.2 (steps, batch, 128->512 phases); "
            "Ke et al. 2021 (TUPE), Table 2 (rate, warm-up ratio, epsilon, no NSP)",
            {
                "steps": 1_000_000,
                "batch_size": 256,
                "block_size": 128,
                "long_block_size": 512,
                "long_fraction": 0.1,
                "learning_rate": 1e-4,
                # Ke et al., Table 2: "Warm-up Ratio 0.01" (the text: a 10k-step warm-up of
                # 1M): a ratio, so a shorter --steps warms up in proportion.
                "warmup_ratio": 0.01,
                "adam_epsilon": 1e-6,
                "weight_decay": 0.01,
                "clip": 1.0,
            },
            "1M steps of 256 sequences, 90 % at 128 tokens and 10 % at 512, rate 1e-4 "
            "after a 1 % warm-up (10k steps)",
            ("no next-sentence prediction (RoBERTa's FULL-SENTENCES packing, as Ke et al.)",),
        ),
        Recipe(
            "cpu-hour",
            "posharness (docs/pretraining.md, 'Learning to attend on 2 CPU cores'): issue "
            "41's measured search, run e2 with sparse prediction",
            {
                "steps": 1500,
                "batch_size": 64,
                "block_size": 32,
                "learning_rate": 2e-3,
                "sparse_prediction": True,
            },
            "1,500 steps of 64 x 32 tokens at rate 2e-3 (warm-up 6 %, linear decay), "
            "dropout 0.1, sparse prediction, an 8,192-piece WordPiece; with --size narrow "
            f"{CPU_HOUR_ALONE.quote()} ({CPU_HOUR_SHARED.quote()})",
            (
                "a search result, not a published setup: comparable only to runs of this "
                "recipe at this size on the same corpus, never to BERT-base rows",
                "blocks of 32 tokens: evaluate the learned tables at 32 (positions 32-127 "
                "are untrained)",
            ),
            vocab_size=8192,
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
