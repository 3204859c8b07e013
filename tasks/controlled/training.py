"""The classifier on top of the positional encoder, trained for all settings and repeats at once.

Chen et al. (2023, §3.3.1): dropout 0.5 after the encoder, a classifier trained with
cross-entropy, Adam at 0.002 "with a decaying strategy", 5 epochs, the best epoch on the
validation set evaluated on test, 5 repeats averaged. Our reading (docs/fidelity.md): a
linear softmax classifier on the pooled sentence vector, the rate multiplied by
``lr_decay`` after every epoch, mini-batches of ``batch_size``.

The R x K classifiers (repeats x settings) are independent: their parameters are stacked
into one tensor and their losses summed, so one Adam step updates each exactly as if it
were trained alone (Adam's moments are per element). Within a repeat every setting sees
the same batch order and initial weights drawn from the same generator (common random
numbers: the settings' comparison is not blurred by order noise); repeats differ in both.

Speed on 2 busy cores: the features are held as [N, K, d] so a batch is a gather of whole
rows, and a dropout mask at rate 0.5 is made from random bytes unpacked into bits (one
random draw per 8 mask entries); other rates draw one uniform number per entry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 5
    lr: float = 0.002
    lr_decay: float = 0.8
    batch_size: int = 64
    dropout: float = 0.5
    repeats: int = 5
    seed: int = 0


@dataclass
class Scores:
    dev: np.ndarray  # [R, K, epochs] accuracy
    test: np.ndarray  # [R, K, epochs]
    best_epoch: np.ndarray  # [R, K], 1-based, first best dev epoch
    test_at_best: np.ndarray  # [R, K]


def _accuracy(features: torch.Tensor, labels: torch.Tensor, weight, bias) -> np.ndarray:
    """[R, K] accuracy of every classifier on the rows of ``features`` [K, N, d]."""
    logits = torch.einsum("knd,rkdc->rknc", features, weight) + bias.unsqueeze(2)
    return (logits.argmax(-1) == labels).float().mean(-1).numpy()


def _keep_mask(shape, rate: float, gen: torch.Generator, bits: np.random.Generator):
    """Which entries dropout keeps: Bernoulli(1 - rate), from packed random bits at 0.5."""
    if rate == 0.5:
        n = int(np.prod(shape))
        packed = bits.integers(0, 256, size=(n + 7) // 8, dtype=np.uint8)
        return torch.from_numpy(np.unpackbits(packed)[:n].reshape(shape))
    return torch.rand(shape, generator=gen) >= rate


def train(
    features: torch.Tensor, labels: np.ndarray, split: np.ndarray, config: TrainConfig
) -> Scores:
    """Train R x K linear classifiers on ``features`` [K, N, d]; score dev and test per epoch."""
    k, _, d = features.shape
    classes = int(labels.max()) + 1
    reps = config.repeats
    y = torch.from_numpy(labels)
    train_rows = np.flatnonzero(split == 0)
    dev_rows, test_rows = (torch.from_numpy(np.flatnonzero(split == s)) for s in (1, 2))
    dev_x, test_x = features[:, dev_rows], features[:, test_rows]
    dev_y, test_y = y[dev_rows], y[test_rows]
    rows_first = features.transpose(0, 1).contiguous()  # [N, K, d]: a batch is whole rows

    gen = torch.Generator().manual_seed(config.seed)
    bound = 1.0 / d**0.5  # nn.Linear's default initialisation
    weight = ((torch.rand((reps, k, d, classes), generator=gen) * 2 - 1) * bound).requires_grad_()
    bias = ((torch.rand((reps, k, classes), generator=gen) * 2 - 1) * bound).requires_grad_()
    optimizer = torch.optim.Adam([weight, bias], lr=config.lr)
    orders = [np.random.default_rng([config.seed, r]) for r in range(reps)]
    bits = np.random.default_rng([config.seed, reps])

    dev = np.zeros((reps, k, config.epochs))
    test = np.zeros((reps, k, config.epochs))
    for epoch in range(config.epochs):
        for group in optimizer.param_groups:
            group["lr"] = config.lr * config.lr_decay**epoch
        perms = np.stack([rng.permutation(train_rows) for rng in orders])  # [R, Ntr]
        for start in range(0, perms.shape[1], config.batch_size):
            idx = torch.from_numpy(perms[:, start : start + config.batch_size])  # [R, B]
            b = idx.shape[1]
            x = rows_first[idx]  # [R, B, K, d]
            x = x * _keep_mask(x.shape, config.dropout, gen, bits) / (1.0 - config.dropout)
            logits = torch.einsum("rbkd,rkdc->rbkc", x, weight) + bias.unsqueeze(1)
            target = y[idx].unsqueeze(2).expand(reps, b, k)
            loss = F.cross_entropy(
                logits.reshape(-1, classes), target.reshape(-1), reduction="none"
            )
            optimizer.zero_grad(set_to_none=True)
            loss.view(reps, b, k).mean(1).sum().backward()
            optimizer.step()
        with torch.no_grad():
            dev[:, :, epoch] = _accuracy(dev_x, dev_y, weight, bias)
            test[:, :, epoch] = _accuracy(test_x, test_y, weight, bias)
    best = dev.argmax(-1)  # first maximum: the earliest best epoch
    return Scores(
        dev=dev,
        test=test,
        best_epoch=best + 1,
        test_at_best=np.take_along_axis(test, best[..., None], -1)[..., 0],
    )
