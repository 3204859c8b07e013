"""The card of a pretraining checkpoint: how the weights in the folder were made.

Every ``checkpoint-<step>/`` and ``final/`` folder is a Hugging Face folder
(``from_pretrained`` after ``import posharness``) and carries two files beside the
weights: ``README.md``, a model card a person reads (recipe and its source, corpus
identity, how the run was launched, tokens seen, the loss curve), and
``pretraining.json``, the same facts for a program. Neither is part of the model's
fingerprint, which stays the weights, config and tokenizer (``models/hf/checkpoint.py``):
two runs that end in the same weights are one model, however they were launched. No
path of the machine that trained it is written: the corpus is named by its last path
part and identified by its hash.

The card lists every ``--model-arg`` as given (issue 39: a run with
``hidden_dropout_prob=0`` showed only the recipe's ``dropout | True``, which is train mode,
not a probability). The pairs reach the card through :func:`given_model_args`, set by
``workflow.pretrain_scheme`` around the training loop, so the loop's signature does not
carry a field only the card reads; a loop run outside it lists none.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict
from pathlib import Path
from typing import Any

CARD_NAME = "README.md"
FACTS_NAME = "pretraining.json"
FACTS_FORMAT = "posharness-pretraining-card/1"
CURVE_ROWS = 12  # loss records shown in the card's table (all are in pretraining.json)

_MODEL_ARGS: ContextVar[tuple[tuple[str, str], ...]] = ContextVar(
    "posharness_card_model_args", default=()
)


@contextmanager
def given_model_args(pairs: Mapping[str, object]) -> Iterator[None]:
    """Cards written inside this block list ``pairs``, the ``--model-arg KEY=VALUE`` given:
    every one, a scheme's own option or a geometry target (``locality=``) as much as a
    ``PEConfig`` field, each as the text given."""
    token = _MODEL_ARGS.set(tuple((str(key), str(value)) for key, value in pairs.items()))
    try:
        yield
    finally:
        _MODEL_ARGS.reset(token)


def card_facts(
    settings: Any,
    model_config: dict[str, Any],
    corpus: Any,
    corpus_sha256: str,
    sessions: list[dict[str, Any]],
    step: int,
    tokens_seen: int,
    seconds: float,
    records: Sequence[Any],
) -> dict[str, Any]:
    """What the card says, as one JSON-ready document."""
    from posharness.models.pretrain.recipes import RECIPES

    preset = RECIPES.get(settings.preset) if settings.preset else None
    return {
        "format": FACTS_FORMAT,
        "scheme": model_config.get("scheme") or model_config.get("model_type"),
        "recipe": {
            "name": settings.preset or "custom",
            "source": preset.source if preset else None,
            "settings": settings.recipe(),
        },
        "model_args": dict(_MODEL_ARGS.get()),
        "corpus": {"name": Path(str(corpus)).name or str(corpus), "sha256": corpus_sha256},
        "launch": sessions,
        "step": step,
        "tokens_seen": tokens_seen,
        "training_seconds": round(seconds, 1),
        "loss": [asdict(r) for r in records],
    }


def write_card(folder: Path, facts: dict[str, Any], curve: Path | None = None) -> None:
    """``README.md`` and ``pretraining.json`` in ``folder`` (and the curve's PNG, if any)."""
    folder = Path(folder)
    (folder / FACTS_NAME).write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    if curve is not None and Path(curve).exists():
        shutil.copyfile(curve, folder / Path(curve).name)
    (folder / CARD_NAME).write_text(_markdown(facts, curve), encoding="utf-8")


def _markdown(facts: dict[str, Any], curve: Path | None) -> str:
    recipe, corpus = facts["recipe"], facts["corpus"]
    sessions = facts["launch"]
    lines = [
        "---",
        "library_name: transformers",
        "tags: [posharness, masked-lm, positional-encoding"
        + (f", {facts['scheme']}" if facts["scheme"] else "")
        + "]",
        "---",
        "",
        f"# {facts['scheme'] or 'model'}: masked-LM pretraining, step {facts['step']}",
        "",
        "Load with `import posharness` then `AutoModelForMaskedLM.from_pretrained(folder)` "
        "(or `posharness run --model NAME@folder`).",
        "",
        "## Recipe",
        "",
        f"**{recipe['name']}**" + (f" — {recipe['source']}" if recipe["source"] else ""),
        "",
        "| setting | value |",
        "|---|---|",
        *(f"| {key} | {value} |" for key, value in recipe["settings"].items()),
        "",
        *_model_args_lines(facts.get("model_args") or {}),
        "## Corpus",
        "",
        f"`{corpus['name']}`, sha256 `{corpus['sha256']}`",
        "",
        "## Training",
        "",
        f"- steps: {facts['step']}; tokens seen: {facts['tokens_seen']:,}; "
        f"training time: {facts['training_seconds']} s",
        *(
            f"- from step {s['from_step']}: {s['world_size']} process(es) x "
            f"{s['per_device_batch']} per device x {s['accumulation']} accumulated = "
            f"global batch {s['global_batch']} ({s['device']})"
            for s in sessions
        ),
        "",
        "## Loss",
        "",
    ]
    if curve is not None:
        lines += [f"![masked-LM loss]({Path(curve).name})", ""]
    records = facts["loss"]
    shown = records[:: max(1, len(records) // CURVE_ROWS)][:CURVE_ROWS]
    if records and shown[-1] is not records[-1]:
        shown.append(records[-1])
    lines += ["| step | loss | learning rate |", "|---|---|---|"]
    lines += [f"| {r['step']} | {r['loss']:.4f} | {r['learning_rate']:.3g} |" for r in shown]
    lines += ["", f"Every record is in `{FACTS_NAME}`."]
    return "\n".join(lines) + "\n"


def _model_args_lines(pairs: Mapping[str, str]) -> list[str]:
    """The ``--model-arg`` section: each pair as given, or that none was."""
    lines = ["## Model arguments", ""]
    if not pairs:
        return [*lines, "None given: the scheme's configuration at this size.", ""]
    lines += ["| --model-arg | value |", "|---|---|"]
    lines += [f"| {_cell(key)} | {_cell(value)} |" for key, value in pairs.items()]
    return [*lines, ""]


def _cell(text: str) -> str:
    """A value as a Markdown table cell (a ``|`` would end it)."""
    return text.replace("|", "\\|")
