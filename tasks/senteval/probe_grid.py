"""SentEval's probing classifiers, every configuration of the grid trained at once.

Protocol (Conneau et al. 2018 §4 "Probing task classifiers"; SentEval's
``tools/classifier.py`` and ``tools/validation.py: SplitClassifier``):

* an MLP ``Linear(d, nhid) → Dropout(p) → Sigmoid → Linear(nhid, classes)`` with
  nhid ∈ {50, 100, 200} and p ∈ {0, 0.1, 0.2}, or logistic regression ``Linear(d, classes)``
  (WC, where the paper found the MLP no better);
* Adam, batch 64, cross-entropy, L2 (Adam's coupled weight decay) ∈ {1e-5, 1e-4, 1e-3, 1e-2};
* "epochs" of ``epoch_size`` = 4 passes over the shuffled training set; after each, dev
  accuracy; the best state so far is kept. Early stopping as SentEval's
  ``PyTorchClassifier.fit`` runs it: a check that does not improve on the best dev
  accuracy, once ``tenacity`` = 5 such checks have already happened, stops training — and
  the count of non-improving checks is never reset by an improvement, so training ends at
  the sixth non-improving check in total (at most ``max_epoch`` = 200 passes).
  ``tenacity_reset=True`` resets the count on every improvement instead (patience in the
  usual sense; posharness's rule before task version 2), which trains longer;
* the configuration with the best dev accuracy, as SentEval's ``SplitClassifier.run``
  compares it — in percent rounded to two decimals, the first of tied values winning
  (``np.argmax``; SentEval's L2 values ascend, so the smallest L2 of a tie) — is the
  probe; its test accuracy is reported.

Why batched: SentEval fits the 36 MLP configurations one after another, which on a CPU
makes the search cost far more than encoding the sentences. Here all configurations are
columns of one wide first layer (one GEMM per step), and their second layers a block
diagonal, one block per L2 value so that each is an Adam parameter group with that
``weight_decay``. Each configuration keeps its own parameters, Adam moments, dropout rate
and early-stopping state, so it follows the trajectory it would follow alone given the
shared batch order (SentEval reseeds every fit with the same seed, so its configurations
see the same order too). A configuration whose patience ran out is kept at its best state
and cut out of its block, Adam moments included, so finished configurations cost nothing.

``search="halving"`` is the one departure, and only on request: successive halving
(Jamieson & Talwalkar 2016) stops the worse half of the configurations still training
after every epoch, so the grid costs a few configuration-epochs more than one fit.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np
import torch

from posharness.tasks.senteval.probe_rules import choose, early_stop_step

MLP_HIDDEN = (50, 100, 200)
MLP_DROPOUT = (0.0, 0.1, 0.2)
L2_GRID = (1e-5, 1e-4, 1e-3, 1e-2)
CLASSIFIERS = ("mlp", "logreg")
SEARCHES = ("full", "halving")


@dataclass(frozen=True)
class Config:
    hidden: int  # 0: logistic regression
    dropout: float
    l2: float

    def describe(self) -> dict[str, float]:
        return {"nhid": self.hidden, "dropout": self.dropout, "l2": self.l2}


@dataclass(frozen=True)
class Protocol:
    classifier: str = "mlp"
    batch_size: int = 64
    epoch_size: int = 4
    tenacity: int = 5
    max_epoch: int = 200
    seed: int = 1111  # SentEval's default seed
    search: str = "full"  # "halving": successive halving over the grid (see docs)
    tenacity_reset: bool = False  # True: an improvement resets the count (not SentEval's)

    def grid(self) -> list[Config]:
        if self.classifier == "logreg":
            return [Config(0, 0.0, l2) for l2 in L2_GRID]
        return [Config(h, p, l2) for h in MLP_HIDDEN for p in MLP_DROPOUT for l2 in L2_GRID]


@dataclass
class GridResult:
    """Every configuration's best dev accuracy and the chosen one's predictions."""

    configs: list[Config]
    dev_accuracy: np.ndarray  # per configuration, of its best state
    passes: np.ndarray  # passes over the training set when each configuration stopped
    best: int  # index into configs
    dev_predictions: np.ndarray
    test_predictions: np.ndarray
    train_accuracy: float  # of the chosen configuration's best state
    total_passes: int = 0
    seconds: float = 0.0
    dev_curves: list[list[float]] = field(default_factory=list)  # per config, every check
    extras: dict[str, float] = field(default_factory=dict)

    @property
    def chosen(self) -> Config:
        return self.configs[self.best]


class _Block:
    """Configurations sharing one L2 value, their parameters laid side by side.

    MLPs: ``w1`` [d, Σnhid], ``b1`` [Σnhid], ``w2`` [Σnhid, classes], ``b2`` [G, classes],
    hidden units of configuration j in the contiguous range ``spans[j]``. Logistic
    regression: ``w2`` [G, d, classes], ``b2`` [G, classes].
    """

    def __init__(self, configs: list[Config], params: list[torch.Tensor], classes: int):
        self.configs = configs
        self.classes = classes
        self.linear = configs[0].hidden == 0
        self.params = [p.detach().clone().requires_grad_(True) for p in params]
        widths = [c.hidden for c in configs]
        offsets = np.concatenate([[0], np.cumsum(widths)]).astype(int)
        self.spans = [(int(offsets[j]), int(offsets[j + 1])) for j in range(len(configs))]
        if not self.linear:
            self.owner = torch.repeat_interleave(torch.arange(len(configs)), torch.tensor(widths))
            self.keep_scale = 1 / (1 - torch.tensor([c.dropout for c in configs]))[self.owner]
            self.drop = torch.tensor([c.dropout for c in configs])[self.owner]
            self.blocks = torch.zeros(sum(widths), len(configs) * classes)
            self.block_mask = (
                torch.nn.functional.one_hot(self.owner, len(configs))
                .repeat_interleave(classes, dim=1)
                .bool()
            )

    @classmethod
    def initial(cls, configs: list[Config], dim: int, classes: int, seed: int) -> _Block:
        """torch.nn.Linear's default initialisation, drawn per configuration from a
        generator seeded by the configuration itself, so a configuration starts from the
        same weights whether it is trained alone or among the whole grid."""
        parts = [_initial_params(c, dim, classes, seed) for c in configs]
        if configs[0].hidden == 0:
            return cls(configs, [torch.stack([p[i] for p in parts]) for i in range(2)], classes)
        return cls(
            configs,
            [
                torch.cat([p[0] for p in parts], dim=1),
                torch.cat([p[1] for p in parts]),
                torch.cat([p[2] for p in parts]),
                torch.stack([p[3] for p in parts]),
            ],
            classes,
        )

    def logits(self, x: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        """[B, G, classes]; dropout only when a generator is given (training)."""
        if self.linear:
            w2, b2 = self.params
            return torch.einsum("bd,gdc->bgc", x, w2) + b2
        w1, b1, w2, b2 = self.params
        h = torch.addmm(b1, x, w1)  # [B, units]
        if generator is not None:  # Linear → Dropout → Sigmoid, as SentEval's MLP
            keep = torch.rand(h.shape, generator=generator) >= self.drop
            h = h * (keep * self.keep_scale)
        h = torch.sigmoid(h)
        # the output layers as one block-diagonal matrix: one GEMM for every configuration
        block = w2.repeat(1, len(self.configs)) * self.block_mask
        return (h @ block).view(x.shape[0], len(self.configs), self.classes) + b2

    def config_params(self, j: int) -> list[torch.Tensor]:
        """Configuration j's own parameters (views)."""
        if self.linear:
            return [p[j] for p in self.params]
        lo, hi = self.spans[j]
        w1, b1, w2, b2 = self.params
        return [w1[:, lo:hi], b1[lo:hi], w2[lo:hi], b2[j]]

    def without(self, drop: list[int], optimiser: torch.optim.Optimizer) -> _Block | None:
        """The block minus configurations ``drop`` (local indices), Adam state carried over."""
        keep = [j for j in range(len(self.configs)) if j not in drop]
        if not keep:
            return None
        pieces = [self._take(i, p, keep) for i, p in enumerate(self.params)]
        fresh = _Block([self.configs[j] for j in keep], pieces, self.classes)
        for i, (old, new) in enumerate(zip(self.params, fresh.params, strict=True)):
            state = optimiser.state.pop(old, None)
            if state:
                optimiser.state[new] = {
                    "step": state["step"],
                    "exp_avg": self._take(i, state["exp_avg"], keep),
                    "exp_avg_sq": self._take(i, state["exp_avg_sq"], keep),
                }
        return fresh

    def _take(self, index: int, tensor: torch.Tensor, keep: list[int]) -> torch.Tensor:
        """Configurations ``keep`` of parameter ``index`` (or a tensor shaped like it)."""
        t = tensor.detach()
        if self.linear or index == 3:  # [G, ...] per configuration
            return t[keep].clone()
        units = torch.cat([torch.arange(*self.spans[j]) for j in keep])
        return t[:, units].clone() if index == 0 else t[units].clone()


def _initial_params(config: Config, dim: int, classes: int, seed: int) -> list[torch.Tensor]:
    key = f"{seed}|{config.hidden}|{config.dropout}|{config.l2}".encode()
    generator = torch.Generator().manual_seed(zlib.crc32(key))
    bound = 1 / math.sqrt(dim)
    if config.hidden == 0:
        return [_uniform((dim, classes), bound, generator), _uniform((classes,), bound, generator)]
    out_bound = 1 / math.sqrt(config.hidden)
    return [
        _uniform((dim, config.hidden), bound, generator),
        _uniform((config.hidden,), bound, generator),
        _uniform((config.hidden, classes), out_bound, generator),
        _uniform((classes,), out_bound, generator),
    ]


def _uniform(shape: tuple[int, ...], bound: float, generator: torch.Generator) -> torch.Tensor:
    return (torch.rand(shape, generator=generator) * 2 - 1) * bound


def fit_grid(
    train: tuple[np.ndarray, np.ndarray],
    dev: tuple[np.ndarray, np.ndarray],
    test: np.ndarray,
    classes: int,
    protocol: Protocol,
    configs: list[Config] | None = None,
) -> GridResult:
    """Train every configuration of ``protocol``'s grid (or ``configs``); choose on dev.

    Labels are class ids 0..classes-1. Returns the chosen configuration's predictions on
    dev and test; the choice is on dev accuracy in percent rounded to two decimals, ties
    going to the earlier configuration of the grid (see ``choose``).
    """
    import time

    clock = time.perf_counter()
    configs = configs or protocol.grid()
    generator = torch.Generator().manual_seed(protocol.seed)
    x_train = torch.from_numpy(np.ascontiguousarray(train[0], dtype=np.float32))
    y_train = torch.from_numpy(train[1].astype(np.int64))
    x_dev = torch.from_numpy(np.ascontiguousarray(dev[0], dtype=np.float32))
    y_dev = dev[1].astype(np.int64)
    dim = x_train.shape[1]
    blocks: list[_Block] = []
    members: list[list[int]] = []  # global config index of each block's configurations
    for l2 in dict.fromkeys(c.l2 for c in configs):
        ids = [i for i, c in enumerate(configs) if c.l2 == l2]
        blocks.append(_Block.initial([configs[i] for i in ids], dim, classes, protocol.seed))
        members.append(ids)
    optimiser = _adam(blocks)
    best_acc = np.full(len(configs), -1.0)
    best_state: dict[int, list[torch.Tensor]] = {}
    patience = np.zeros(len(configs), dtype=np.int64)  # non-improving checks so far
    curves: list[list[float]] = [[] for _ in configs]
    stopped_at = np.zeros(len(configs), dtype=np.int64)
    passes = 0
    order = np.random.default_rng(protocol.seed)
    while blocks and passes < protocol.max_epoch:
        for _ in range(protocol.epoch_size):
            _one_pass(blocks, optimiser, x_train, y_train, protocol.batch_size, order, generator)
            passes += 1
        done: set[int] = set()
        for b, block in enumerate(blocks):
            accuracy = (_predict(block, x_dev) == y_dev[:, None]).mean(axis=0)
            for j, global_id in enumerate(members[b]):
                curves[global_id].append(float(accuracy[j]))
                improved = bool(accuracy[j] > best_acc[global_id])
                if improved:
                    best_acc[global_id] = accuracy[j]
                    best_state[global_id] = [p.detach().clone() for p in block.config_params(j)]
                patience[global_id], stop = early_stop_step(
                    improved, int(patience[global_id]), protocol.tenacity, protocol.tenacity_reset
                )
                if stop:
                    done.add(global_id)
        if protocol.search == "halving":
            done |= _lower_half([g for ids in members for g in ids if g not in done], best_acc)
        for b, block in enumerate(blocks):
            finished = [j for j, g in enumerate(members[b]) if g in done]
            if finished:
                stopped_at[[members[b][j] for j in finished]] = passes
                members[b] = [g for g in members[b] if g not in done]
                blocks[b] = block.without(finished, optimiser)  # type: ignore[assignment]
        members = [m for m, blk in zip(members, blocks, strict=True) if blk is not None]
        blocks = [blk for blk in blocks if blk is not None]
        optimiser = _adam(blocks, optimiser)
    for ids in members:
        stopped_at[ids] = passes
    best = choose(best_acc)
    chosen = _Block([configs[best]], _as_block(best_state[best], configs[best]), classes)
    return GridResult(
        configs,
        best_acc,
        stopped_at,
        best,
        _predict(chosen, x_dev)[:, 0],
        _predict(chosen, torch.from_numpy(np.asarray(test, dtype=np.float32)))[:, 0],
        float((_predict(chosen, x_train)[:, 0] == y_train.numpy()).mean()),
        total_passes=passes,
        seconds=time.perf_counter() - clock,
        dev_curves=curves,
    )


def _lower_half(active: list[int], best_acc: np.ndarray) -> set[int]:
    """Successive halving (Jamieson & Talwalkar 2016): of the configurations still
    training, the worse half by best dev accuracy so far stops (ties: later in the grid)."""
    if len(active) <= 1:
        return set()
    ranked = sorted(active, key=lambda g: (-best_acc[g], g))
    return set(ranked[(len(active) + 1) // 2 :])


def _as_block(params: list[torch.Tensor], config: Config) -> list[torch.Tensor]:
    """One configuration's parameters shaped as a one-configuration block."""
    if config.hidden == 0:
        return [p[None] for p in params]
    w1, b1, w2, b2 = params
    return [w1, b1, w2, b2[None]]


def _adam(blocks: list[_Block], previous: torch.optim.Optimizer | None = None) -> torch.optim.Adam:
    """Adam (lr 1e-3) with one parameter group per block: ``weight_decay`` = its L2."""
    groups = [{"params": b.params, "weight_decay": b.configs[0].l2} for b in blocks]
    optimiser = torch.optim.Adam(groups or [{"params": [torch.zeros(1)]}], foreach=True)
    if previous is not None:
        for block in blocks:
            for param in block.params:
                if param in previous.state:
                    optimiser.state[param] = previous.state[param]
    return optimiser


def _one_pass(
    blocks: list[_Block],
    optimiser: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    batch_size: int,
    order: np.random.Generator,
    generator: torch.Generator,
) -> None:
    permutation = torch.from_numpy(order.permutation(x.shape[0]))
    for start in range(0, x.shape[0], batch_size):
        rows = permutation[start : start + batch_size]
        xb, yb = x[rows], y[rows]
        loss = torch.zeros(())
        for block in blocks:
            logits = block.logits(xb, generator)  # [B, G, C]
            # each configuration's mean cross-entropy over the batch, summed over configurations
            loss = loss + torch.nn.functional.cross_entropy(
                logits.reshape(-1, block.classes),
                yb.repeat_interleave(len(block.configs)),
                reduction="sum",
            ) / len(rows)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()


def _predict(block: _Block, x: torch.Tensor, chunk: int = 4096) -> np.ndarray:
    """Class ids [N, G] of every configuration of ``block``, without dropout."""
    with torch.no_grad():
        parts = [block.logits(x[i : i + chunk], None).argmax(-1) for i in range(0, len(x), chunk)]
    return torch.cat(parts).numpy() if parts else np.zeros((0, len(block.configs)), np.int64)
