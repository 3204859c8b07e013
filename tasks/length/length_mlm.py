"""``length_mlm``: masked-token accuracy and cross-entropy of a model's masked-LM head on
held-out text, at lengths relative to the length it was trained on (0.5×, 1×, 2×, 4×, 8×
by default), in the mode the cell asks for.

Blocks are seeded windows of the embedded English reference text (or ``corpus=PATH``),
masked with BERT's 80/10/10 recipe under a seed (``mlm_masks.py``): the same blocks and
masks for every model with the same tokenizer. A length the model cannot take (past a
learned position table, special tokens included) or that the corpus cannot fill is *not
applicable*: no number, the reason in ``details["not_applicable"]``. Rotary and ALiBi
scaling are model arguments; the model's description (recorded with every result) holds
its configuration. See docs/tasks/length.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from posharness.base.errors import OptionError
from posharness.contracts.adapter import mode_identity
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MEAN_CONTINUOUS
from posharness.contracts.task import Metric, TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption
from posharness.storage.hashing import hash_file, hash_obj
from posharness.tasks.length.lengths import beyond_model, no_length_applies, parse_lengths
from posharness.tasks.length.mlm_head import MaskedLM, masked_lm_of, training_length
from posharness.tasks.length.mlm_masks import IGNORE, MASKING_VERSION, masked_blocks

if TYPE_CHECKING:
    from posharness.contracts.adapter import ModelAdapter

NAME = "length_mlm"
SCORES_KIND = "length-mlm-scores"
MAIN = "accuracy"
CE = "cross_entropy"
PLL = "pll"  # mean per-token pseudo-log-likelihood (Salazar et al. 2020), nats
PLL_KIND = "length-mlm-pll"
DEFAULT_MULTIPLES = "0.5,1,2,4,8"
TOKENS_PER_BATCH = 8192  # rows per forward pass = this // length: bounded memory at 8×


def length_metric(metric: str, length: int) -> str:
    return f"{metric}_len{length}"


class LengthMLM:
    spec = TaskSpec(
        name=NAME,
        version="1",
        kind="length-mlm",
        description="Masked-token accuracy and cross-entropy at multiples of the training length",
        main_metric=MAIN,
        headline_metrics=(MAIN, CE),
        data_source="the embedded reference text (or corpus=PATH), seeded blocks and masks",
        options=(
            TaskOption("multiples", DEFAULT_MULTIPLES, "Lengths as multiples of train_length."),
            TaskOption("lengths", "", "Lengths in tokens, specials in (replaces multiples)."),
            TaskOption("train_length", "", "Training length (default: the checkpoint card)."),
            TaskOption("blocks", 16, "Held-out blocks per length (--limit caps them)."),
            TaskOption("corpus", "", "A UTF-8 text file instead of the reference text."),
            TaskOption("pll", 0, "Pseudo-log-likelihood at lengths up to this (0: off)."),
        ),
        metric_types={MAIN: MEAN_CONTINUOUS, CE: MEAN_CONTINUOUS},
    )

    def check_model(self, model: ModelAdapter) -> None:
        """A checkpoint whose configuration names no masked-LM head is left out while the
        run is planned (``ChecksModel``): in the ``length`` group the other tasks run."""
        from posharness.base.errors import UnsupportedModeError
        from posharness.contracts.adapter import KnowsMaskedLMHead

        why = model.masked_lm_head_missing() if isinstance(model, KnowsMaskedLMHead) else None
        if why is not None:
            raise UnsupportedModeError(
                f"task {NAME} needs a masked-LM head: {why}; the model can run passkey and "
                "length_geometry (the group length runs what it can)"
            )

    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        options = ctx.options
        blocks = _positive(options["blocks"], "blocks")
        if ctx.limit is not None:
            blocks = min(blocks, ctx.limit)
        pll_max = _positive(options["pll"], "pll", zero=True)
        head = masked_lm_of(model, ctx.mode)  # first: a headless model says so
        lengths, train_length, source = resolve_lengths(model, options)
        corpus = corpus_path(str(options["corpus"]))
        stream = token_stream(model, corpus)
        frame = len(model.wrap_token_ids([]))
        skipped: dict[str, str] = {}
        metrics: dict[str, Metric] = {}
        examples: list[Example] = []
        per_length: dict[str, Any] = {}
        for length in lengths:
            reason = beyond_model(length, model)
            if reason is not None:
                skipped[str(length)] = reason
                continue
            made = masked_blocks(
                stream, length - frame, blocks, head.mask_token_id, head.vocab_size,
                ctx.seed, length,
            )  # fmt: skip
            if made is None:
                skipped[str(length)] = (
                    f"not applicable: the corpus has {len(stream)} tokens, fewer than the "
                    f"{length - frame} a block of {length} needs besides its {frame} "
                    "special tokens"
                )
                continue
            correct, loss = score(model, ctx, head, made.inputs, made.labels, length, corpus)
            accuracy, entropy = correct.mean(axis=1), loss.mean(axis=1)  # per block
            name, ce_name = length_metric(MAIN, length), length_metric(CE, length)
            metrics[name] = Metric(
                float(accuracy.mean()), stderr=_stderr(accuracy), n=len(accuracy)
            )
            metrics[ce_name] = Metric(
                float(entropy.mean()), stderr=_stderr(entropy), n=len(entropy)
            )
            per_length[str(length)] = {
                MAIN: float(accuracy.mean()),
                CE: float(entropy.mean()),
                "multiple": round(length / train_length, 4),
                "masked_per_block": int(correct.shape[1]),
            }
            pll = None
            if length <= pll_max:
                pll = score_pll(model, ctx, head, stream, made.starts, length, corpus).mean(axis=1)
                per_length[str(length)][PLL] = float(pll.mean())
                per_length[str(length)]["pseudo_perplexity"] = float(np.exp(-pll).mean())
                metrics[length_metric(PLL, length)] = Metric(
                    float(pll.mean()), stderr=_stderr(pll), n=len(pll)
                )
            for b in range(len(accuracy)):
                acc, ce = float(accuracy[b]), float(entropy[b])
                examples.append(
                    Example(
                        id=f"L{length}-b{b:03d}",
                        score=acc,
                        **{MAIN: acc, name: acc, CE: ce, ce_name: ce},
                        start=int(made.starts[b]),
                        **({} if pll is None else {length_metric(PLL, length): float(pll[b])}),
                        length=length,
                    )
                )
        if not per_length:
            raise no_length_applies(NAME, lengths, model, skipped)
        for metric in (MAIN, CE):
            values = np.array([e.value(metric) for e in examples])
            mean = float(np.mean([per_length[k][metric] for k in per_length]))
            metrics[metric] = Metric(mean, stderr=_stderr(values), n=len(values))
        settings = {
            "lengths": list(lengths),
            "lengths_scored": [int(k) for k in per_length],
            "train_length": train_length,
            "train_length_from": source,
            "blocks": blocks,
            "seed": ctx.seed,
            "masking": MASKING_VERSION,
            "corpus": str(options["corpus"]) or "reference",
            "pll_max_length": pll_max,
            "max_length": model.max_length,
        }
        return TaskResult(
            metrics=metrics,
            data_hash=hash_obj({"corpus": hash_file(corpus), "masking": MASKING_VERSION})[:16],
            details={"per_length": per_length, "not_applicable": skipped},
            examples=examples,
            settings=settings,
        )


def resolve_lengths(model: Any, options: dict[str, Any]) -> tuple[tuple[int, ...], int, str]:
    """Absolute lengths when given (training length then optional), else the multiples of
    the training length, rounded to whole tokens."""
    if str(options["lengths"]).strip():
        lengths = parse_lengths(options["lengths"], NAME)
        try:
            train, source = training_length(model, str(options["train_length"]))
        except OptionError:
            if str(options["train_length"]).strip():
                raise
            train, source = max(lengths), "unknown (lengths given)"
        return lengths, train, source
    train, source = training_length(model, str(options["train_length"]))
    multiples = []
    for part in str(options["multiples"]).split(","):
        try:
            value = float(part)
        except ValueError:
            value = -1.0
        if not value > 0:
            raise OptionError(
                f"--task-arg {NAME}.multiples={options['multiples']}: multiples must be "
                f"positive numbers separated by commas ({part.strip()!r} is not), e.g. "
                f"{NAME}.multiples={DEFAULT_MULTIPLES}"
            )
        multiples.append(value)
    lengths = tuple(sorted({max(1, round(m * train)) for m in multiples}))
    return lengths, train, source


def corpus_path(raw: str) -> Path:
    if not raw.strip():
        from posharness.models.decompose.reference import EMBEDDED_CORPUS

        return EMBEDDED_CORPUS
    path = Path(raw).expanduser()
    if not path.is_file():
        raise OptionError(f"--task-arg {NAME}.corpus={raw}: no such file (give a UTF-8 text)")
    return path


def token_stream(model: Any, corpus: Path) -> list[int]:
    """The corpus's content token ids, paragraph (line) after paragraph."""
    try:
        lines = [line for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    except UnicodeDecodeError:
        raise OptionError(f"--task-arg {NAME}.corpus={corpus}: not UTF-8 text") from None
    stream: list[int] = []
    for item in model.tokenize(lines):
        stream.extend(
            i for i, s in zip(item.input_ids, item.special_tokens_mask, strict=True) if not s
        )
    return stream


def score(
    model: Any,
    ctx: TaskContext,
    head: MaskedLM,
    inputs: np.ndarray,
    labels: np.ndarray,
    length: int,
    corpus: Path,
) -> tuple[np.ndarray, np.ndarray]:
    """Per block, per masked token: 1 where the head's top id is the original one, and the
    cross-entropy in nats. Cached by the model's fingerprint, the mode and the inputs."""
    inputs_hash = hash_obj(
        {"inputs": inputs.tolist(), "labels": labels.tolist(), "corpus": hash_file(corpus)}
    )
    key = ctx.cache.key(
        model.fingerprint(), mode_identity(model, ctx.mode), inputs_hash, SCORES_KIND
    )

    def compute() -> dict:
        import torch

        wrapped = [model.wrap_token_ids([int(i) for i in row]) for row in inputs]
        ids = torch.tensor([w.input_ids for w in wrapped], dtype=torch.int64)
        content = ~torch.tensor([w.special_tokens_mask for w in wrapped], dtype=torch.bool)
        full = torch.full(ids.shape, IGNORE, dtype=torch.int64)
        full[content] = torch.from_numpy(labels).reshape(-1)
        rows = max(1, TOKENS_PER_BATCH // length)
        correct, loss = [], []
        advance = ctx.progress(f"{NAME} {length}", len(ids))
        with torch.no_grad():
            for start in range(0, len(ids), rows):
                batch = ids[start : start + rows].to(ctx.device)
                logits = head.logits(batch, torch.ones_like(batch)).float()
                gold = full[start : start + rows].to(logits.device)
                chosen = gold != IGNORE
                picked, truth = logits[chosen], gold[chosen]
                nll = torch.nn.functional.cross_entropy(picked, truth, reduction="none")
                correct.append((picked.argmax(-1) == truth).reshape(batch.shape[0], -1).cpu())
                loss.append(nll.reshape(batch.shape[0], -1).cpu())
                advance(batch.shape[0])
        return {"correct": torch.cat(correct).double(), "loss": torch.cat(loss).double()}

    tensors = ctx.cache.get_or_compute(key, SCORES_KIND, compute, meta={"length": length})
    return tensors["correct"].numpy(), tensors["loss"].numpy()


def score_pll(
    model: Any,
    ctx: TaskContext,
    head: MaskedLM,
    stream: list[int],
    starts: np.ndarray,
    length: int,
    corpus: Path,
) -> np.ndarray:
    """[blocks, content tokens] log P(w_t | the block without t), the unmasked blocks;
    cached like ``score``."""
    from posharness.tasks.length.pll import token_log_likelihoods

    frame = len(model.wrap_token_ids([]))
    wrapped = [model.wrap_token_ids(stream[s : s + length - frame]) for s in starts]
    framed = np.array([w.input_ids for w in wrapped], dtype=np.int64)
    content = ~np.array(wrapped[0].special_tokens_mask, dtype=bool)
    inputs_hash = hash_obj({"inputs": framed.tolist(), "corpus": hash_file(corpus)})
    mode = mode_identity(model, ctx.mode)
    key = ctx.cache.key(model.fingerprint(), mode, inputs_hash, PLL_KIND)

    def compute() -> dict:
        import torch

        advance = ctx.progress(f"{NAME} pll {length}", len(framed))
        values = token_log_likelihoods(head, framed, content, ctx.device, TOKENS_PER_BATCH, advance)
        return {"pll": torch.from_numpy(values)}

    return ctx.cache.get_or_compute(key, PLL_KIND, compute, meta={"length": length})["pll"].numpy()


def _positive(raw: Any, name: str, zero: bool = False) -> int:
    text = str(raw).strip()
    if not text.isdigit() or int(text) < (0 if zero else 1):
        kind = "a whole number, 0 or more" if zero else "a positive whole number"
        raise OptionError(f"--task-arg {NAME}.{name}={raw}: give {kind}")
    return int(text)


def _stderr(values: np.ndarray) -> float | None:
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else None
