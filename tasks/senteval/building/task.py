"""What a task builder receives and returns, which builder makes which task, and what
annotation each one needs from the sources.

A builder is a function ``(TaskContext) -> TaskResult`` in one of the task modules; the
table :data:`BUILDERS` names it as ``"module:function"`` so that importing this module
imports no builder.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from posharness.tasks.senteval.building.balance import (
    Allocation,
    Candidate,
    Sizes,
    allocate,
    allocate_transformed,
    rng_for,
)
from posharness.tasks.senteval.building.pool import SentencePool

_PACKAGE = "posharness.tasks.senteval.building"
BUILDERS: dict[str, str] = {
    "sentlen": "surface_tasks:sentence_length",
    "wc": "surface_tasks:word_content",
    "treedepth": "syntax_tasks:tree_depth",
    "topconst": "syntax_tasks:top_constituents",
    "bshift": "syntax_tasks:bigram_shift",
    "tense": "semantic_tasks:past_present",
    "subjnum": "semantic_tasks:subject_number",
    "objnum": "semantic_tasks:object_number",
    "somo": "somo:odd_man_out",
    "coordinv": "coordinv:coordination_inversion",
}

# What each task needs from the sources: any sentence, a constituency tree, a parse of
# either kind (constituency or CoNLL-U), or part-of-speech tags (any parse gives them).
ANY, TREE, PARSE, TAGS = "sentences", "constituency", "parse", "tags"
NEEDS: dict[str, str] = {
    "sentlen": ANY,
    "wc": ANY,
    "bshift": ANY,
    "treedepth": TREE,
    "topconst": TREE,
    "tense": PARSE,
    "subjnum": PARSE,
    "objnum": PARSE,
    "coordinv": PARSE,
    "somo": TAGS,
}
NEED_HINTS = {
    TREE: "constituency parses: none of the sources has them "
    "(pass --snli FILE with parses or --ptb FILE)",
    PARSE: "parses (constituency or CoNLL-U): none of the sources has them "
    "(pass --conllu FILE, --snli FILE with parses or --ptb FILE)",
    TAGS: "part-of-speech tags from parsed sentences: none of the sources has them "
    "(pass --conllu FILE, --snli FILE with parses or --ptb FILE)",
}


@dataclass(frozen=True)
class TaskContext:
    pool: SentencePool
    seed: int
    requested: Sizes
    # Construction settings a Python caller may change (tests on tiny corpora do); the
    # command line always uses the paper's. Known: "wc_words" (1000), "wc_window_starts".
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class TaskResult:
    """One task's examples and everything the manifest records about how they were made."""

    name: str
    allocation: Allocation
    classes: tuple[str, ...]
    candidates: int  # sentences that could have been used, before balancing
    excluded: Counter[str] = field(default_factory=Counter)  # task-specific reasons
    parameters: dict[str, Any] = field(default_factory=dict)


def allocated(
    name: str,
    candidates: list[Candidate],
    classes: tuple[str, ...],
    context: TaskContext,
    excluded: Counter[str] | None = None,
    parameters: dict[str, Any] | None = None,
) -> TaskResult:
    """A labelled task's result: ``candidates`` balanced over ``classes`` per split, with
    the task's own seeded stream (``rng_for(seed, name)``)."""
    rng = rng_for(context.seed, name)
    allocation = allocate(candidates, classes, context.requested, rng)
    return TaskResult(
        name, allocation, classes, len(candidates), excluded or Counter(), parameters or {}
    )


def transformed(
    name: str,
    eligible: list[Any],
    labels: tuple[str, str],
    context: TaskContext,
    rng: Any,
    make: Callable[[Any, str], Candidate],
    excluded: Counter[str],
    parameters: dict[str, Any],
) -> TaskResult:
    """BShift, SOMO, CoordInv: half of each split changed (``labels[0]``), half kept, no
    sentence in both forms (``balance.allocate_transformed``)."""
    allocation = allocate_transformed(eligible, labels, context.requested, rng, make)
    return TaskResult(name, allocation, labels, len(eligible), excluded, parameters)


def builder(name: str) -> Callable[[TaskContext], TaskResult]:
    module, function = BUILDERS[name].split(":")
    return getattr(importlib.import_module(f"{_PACKAGE}.{module}"), function)
