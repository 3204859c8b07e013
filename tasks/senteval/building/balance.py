"""Class-balanced, seeded train/dev/test splits (Conneau et al. §3: "balanced" 100k/10k/10k).

Every task ends here: candidates with a label go in, equal counts per class in each split
come out. When the sources cannot fill the requested sizes, every split shrinks by the
same factor, so the requested train:dev:test ratio holds (what rounding down leaves goes to
train), and each split keeps at least one example per class while the sources allow it.
Tense, SubjNum and ObjNum also keep their target words apart (no verb/noun in two splits:
Conneau et al. §3), by assigning whole target-word groups to splits before balancing.

All randomness comes from :func:`rng_for`, a ``random.Random`` seeded with text (hashed
with SHA-512 by Python, so independent of ``PYTHONHASHSEED``), or :func:`pick`, and every
collection is ordered before it is shuffled: the same sources and seed give the same files
byte for byte.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from posharness.tasks.senteval.catalog import SPLITS

Sizes = dict[str, int]  # split code -> examples


def rng_for(seed: int, *parts: str) -> random.Random:
    """A generator for one purpose (``rng_for(0, "somo", sentence_key)``)."""
    return random.Random("/".join((str(seed), *parts)))


def pick(seed: int, *parts: str | int) -> int:
    """One uniform choice in ``range(parts[-1])`` for one purpose, without a generator:
    ``pick(0, "bshift", sentence_key, 12)`` (BLAKE2b of the text, so also stable)."""
    *purpose, options = parts
    digest = hashlib.blake2b("/".join(map(str, (seed, *purpose))).encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big") % int(options)


@dataclass(frozen=True)
class Candidate:
    """One possible example: its label, the sentence and output tokens, and what changed."""

    label: str
    sentence: Any  # corpus.Sentence
    tokens: tuple[str, ...]  # the tokens written (changed for I/C examples)
    group: str = ""  # the target word that must stay in one split ("" = none)
    change: dict[str, Any] | None = None  # what was done to the sentence (I/C examples)
    basis: dict[str, Any] | None = None  # what the label rests on (target word, depth...)


@dataclass
class Allocation:
    """Examples per split (each split's examples in file order) and the balance record."""

    examples: dict[str, list[Candidate]]
    per_class: dict[str, dict[str, int]]  # split -> label -> count
    unused: int  # candidates left out by balancing
    missing: tuple[str, ...] = ()  # classes without a single candidate (left out)

    @property
    def sizes(self) -> Sizes:
        return {split: len(self.examples[split]) for split in SPLITS}


def per_class_wanted(requested: Sizes, classes: int) -> Sizes:
    """Requested examples per class and split: ``size // classes``, at least one."""
    return {split: max(1, requested[split] // classes) for split in SPLITS}


def split_quotas(requested: Sizes, classes: int, available: int) -> Sizes:
    """Examples per class in each split, when every class has ``available`` candidates."""
    wanted = per_class_wanted(requested, classes)
    need = sum(wanted.values())
    if need <= available:
        return wanted
    factor = available / need
    quotas = {split: math.floor(wanted[split] * factor) for split in SPLITS}
    train = SPLITS[0]
    for split in SPLITS[1:]:  # dev and test keep one per class while train can give it
        if quotas[split] == 0 and quotas[train] > 1:
            quotas[split] = 1
            quotas[train] -= 1
    # what rounding down left over goes to train
    quotas[train] = min(wanted[train], quotas[train] + available - sum(quotas.values()))
    return quotas


def allocate(
    candidates: Sequence[Candidate],
    classes: Sequence[str],
    requested: Sizes,
    rng: random.Random,
) -> Allocation:
    """Equal counts per class per split, sampled without replacement. A class without a
    single candidate is left out (``Allocation.missing``) rather than emptying the task."""
    by_class: dict[str, list[Candidate]] = {label: [] for label in classes}
    for candidate in candidates:
        by_class[candidate.label].append(candidate)
    missing = tuple(label for label in classes if not by_class[label])
    classes = [label for label in classes if by_class[label]]
    if not classes:
        return _finish({split: [] for split in SPLITS}, (), len(candidates), rng, missing)
    available = min(len(by_class[label]) for label in classes)
    quotas = split_quotas(requested, len(classes), available)
    examples: dict[str, list[Candidate]] = {split: [] for split in SPLITS}
    for label in classes:
        members = list(by_class[label])
        rng.shuffle(members)
        start = 0
        for split in SPLITS:
            examples[split].extend(members[start : start + quotas[split]])
            start += quotas[split]
    return _finish(examples, classes, len(candidates), rng, missing)


def allocate_grouped(
    candidates: Sequence[Candidate],
    classes: Sequence[str],
    requested: Sizes,
    rng: random.Random,
) -> Allocation:
    """As :func:`allocate`, but all candidates sharing a ``group`` go to the same split.

    The per-class quotas are first sized to what the scarcest class allows. Groups are
    then placed in seeded order, each into the split whose quota for the group's classes
    is least filled among the splits it fits into whole (else among all), so the splits
    fill in the requested ratio and one frequent target ("man") cannot swamp a small dev
    or test split. Each split is then balanced on what it received, taking the targets in
    turn (one sentence per target, then a second...) so that it keeps as many distinct
    targets as it can.
    """
    by_class = Counter(candidate.label for candidate in candidates)
    missing = tuple(label for label in classes if not by_class[label])
    classes = [label for label in classes if by_class[label]]
    if not classes:
        return _finish({split: [] for split in SPLITS}, (), len(candidates), rng, missing)
    target = split_quotas(requested, len(classes), min(by_class[label] for label in classes))
    target = {split: max(target[split], 1) for split in SPLITS}
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        groups[candidate.group].append(candidate)
    order = sorted(groups)
    rng.shuffle(order)
    received: dict[str, dict[str, list[Candidate]]] = {
        split: {label: [] for label in classes} for split in SPLITS
    }
    for group in order:
        members = groups[group]
        sizes = Counter(member.label for member in members)

        def fill(split: str, sizes: Counter[str] = sizes) -> float:
            return max(len(received[split][label]) / target[split] for label in sizes)

        def fits(split: str, sizes: Counter[str] = sizes) -> bool:
            return all(
                len(received[split][label]) + size <= target[split] for label, size in sizes.items()
            )

        options = [split for split in SPLITS if fits(split)] or list(SPLITS)
        split = min(options, key=lambda code: (fill(code), SPLITS.index(code)))
        for member in members:
            received[split][member.label].append(member)
    # The scarcest split (relative to its quota) sets one factor for all: ratios hold.
    factor = min(
        [1.0]
        + [
            min(len(received[split][label]) for label in classes) / target[split]
            for split in SPLITS
        ]
    )
    examples: dict[str, list[Candidate]] = {split: [] for split in SPLITS}
    for split in SPLITS:
        least = min(len(received[split][label]) for label in classes)
        quota = max(math.floor(target[split] * factor), min(least, 1))
        for label in classes:
            examples[split].extend(_targets_in_turn(received[split][label], rng)[:quota])
    return _finish(examples, classes, len(candidates), rng, missing)


def _targets_in_turn(members: list[Candidate], rng: random.Random) -> list[Candidate]:
    """``members`` shuffled, then ordered by how many of the same target came before: the
    first sentence of every target, then the second of every target, and so on."""
    shuffled = list(members)
    rng.shuffle(shuffled)
    seen: Counter[str] = Counter()
    turns = []
    for candidate in shuffled:
        turns.append(seen[candidate.group])
        seen[candidate.group] += 1
    return [c for _, c in sorted(zip(turns, shuffled, strict=True), key=lambda pair: pair[0])]


def allocate_transformed(
    eligible: Sequence[Any],
    labels: tuple[str, str],
    requested: Sizes,
    rng: random.Random,
    make: Callable[[Any, str], Candidate],
) -> Allocation:
    """For BShift, SOMO, CoordInv: ``eligible`` sentences (each could be changed) split so
    that half of each split is changed (``labels[0]``, e.g. ``I``) and half kept
    (``labels[1]``, ``O``); no sentence appears in both forms. ``make(item, label)`` builds
    the example. ``eligible`` is used in the order given (shuffle it first)."""
    quotas = split_quotas(requested, 2, len(eligible) // 2)
    examples: dict[str, list[Candidate]] = {split: [] for split in SPLITS}
    start = 0
    for split in SPLITS:
        for label in labels:
            chosen = eligible[start : start + quotas[split]]
            examples[split].extend(make(item, label) for item in chosen)
            start += quotas[split]
    return _finish(examples, labels, len(eligible), rng)


def _finish(
    examples: dict[str, list[Candidate]],
    classes: Sequence[str],
    total: int,
    rng: random.Random,
    missing: tuple[str, ...] = (),
) -> Allocation:
    per_class = {
        split: {label: 0 for label in classes} | dict(Counter(c.label for c in examples[split]))
        for split in SPLITS
    }
    for split in SPLITS:
        rng.shuffle(examples[split])  # classes interleaved, as in the official files
    used = sum(len(members) for members in examples.values())
    return Allocation(examples, per_class, total - used, missing)


def length_matched(
    by_class: dict[str, list[Candidate]],
    per_class: int,
    length: Callable[[Candidate], int],
    rng: random.Random,
) -> tuple[dict[str, list[Candidate]], dict[str, float]]:
    """``per_class`` candidates of every class, chosen so that sentence length tells as
    little as possible about the class (TreeDepth: Conneau et al. §3 decorrelate depth and
    length).

    Greedy water-filling over exact token lengths: classes take turns, each taking its
    next sentence at the length where it lags furthest behind that length's best-filled
    class (ties: the length where every class has most sentences left, then the shorter).
    With enough sentences every class gets the same length histogram (length is then
    independent of the class); where a class has none of some length the histograms
    differ as little as this greedy can make them. The returned figures are the accuracy
    of the best length-only classifier on the chosen set and on a class-balanced random
    choice of the same size, and chance.
    """
    classes = sorted(by_class)
    cells: dict[tuple[int, str], list[Candidate]] = defaultdict(list)
    for label in classes:
        for candidate in by_class[label]:
            cells[(length(candidate), label)].append(candidate)
    for key in sorted(cells):
        rng.shuffle(cells[key])
    lengths = sorted({key[0] for key in cells})
    taken = {(n, label): 0 for n in lengths for label in classes}
    best = dict.fromkeys(lengths, 0)  # the largest count of any class at each length

    def spare(n: int) -> int:
        return min(len(cells[(n, label)]) - taken[(n, label)] for label in classes)

    bottleneck = {n: spare(n) for n in lengths}
    chosen = {label: 0 for label in classes}
    active = [label for label in classes if per_class > 0]
    while active:
        for label in list(active):
            open_lengths = [n for n in lengths if taken[(n, label)] < len(cells[(n, label)])]
            if not open_lengths or chosen[label] >= per_class:
                active.remove(label)
                continue
            n = max(open_lengths, key=lambda n: (best[n] - taken[(n, label)], bottleneck[n], -n))
            taken[(n, label)] += 1
            best[n] = max(best[n], taken[(n, label)])
            bottleneck[n] = spare(n)
            chosen[label] += 1
    selected = {
        label: [c for n in lengths for c in cells[(n, label)][: taken[(n, label)]]]
        for label in classes
    }
    total = sum(chosen.values())
    random_best = 0.0
    for n in lengths:
        random_best += max(
            len(cells[(n, label)]) / max(len(by_class[label]), 1) * chosen[label]
            for label in classes
        )
    figures = {
        "chance": round(1 / len(classes), 4),
        "balanced_random": round(random_best / total, 4) if total else 0.0,
        "built": round(sum(best.values()) / total, 4) if total else 0.0,
    }
    return selected, figures
