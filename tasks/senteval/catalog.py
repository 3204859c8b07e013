"""The ten SentEval probing tasks (Conneau et al. 2018, Table 1): names, files, labels.

One table shared by the reader, the builder and the summaries, so a task's name, its
official file and its label set are written down once. ``labels`` is the closed label set
where the paper fixes one; ``None`` marks the open sets (WC's 1,000 words, TopConst's 19
sequences + OTHER), which the reader checks by rule instead. What each task needs from
a source to be built is the builder's business (``building/task.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

SPLITS = ("tr", "va", "te")  # SentEval's split codes: train, dev (validation), test


@dataclass(frozen=True)
class ProbingTask:
    name: str  # our task name (`posharness run --tasks bshift`)
    title: str  # the papers' column header (Chen et al. Table 9)
    file: str  # the official file name in SentEval's data/probing/
    category: str  # Surface | Syntactic | Semantic (Conneau et al. §3)
    labels: tuple[str, ...] | None  # closed label set, None when the data defines it
    max_classes: int  # classes the paper's construction yields
    description: str


TASKS: tuple[ProbingTask, ...] = (
    ProbingTask(
        "sentlen",
        "SentLen",
        "sentence_length.txt",
        "Surface",
        ("0", "1", "2", "3", "4", "5"),
        6,
        "number of words, in six bins (5-8, 9-12, 13-16, 17-20, 21-25, 26-28)",
    ),
    ProbingTask(
        "wc",
        "WC",
        "word_content.txt",
        "Surface",
        None,
        1000,
        "which of 1,000 mid-frequency words the sentence contains (exactly one of them)",
    ),
    ProbingTask(
        "treedepth",
        "TreeDepth",
        "tree_depth.txt",
        "Syntactic",
        tuple(str(d) for d in range(5, 13)),
        8,
        "depth of the constituency tree, 5-12",
    ),
    ProbingTask(
        "topconst",
        "TopConst",
        "top_constituents.txt",
        "Syntactic",
        None,
        20,
        "the sequence of top constituents below S: 19 most frequent sequences or OTHER",
    ),
    ProbingTask(
        "bshift",
        "BShift",
        "bigram_shift.txt",
        "Syntactic",
        ("O", "I"),
        2,
        "were two adjacent words swapped (I) or is the order original (O)",
    ),
    ProbingTask(
        "tense",
        "Tense",
        "past_present.txt",
        "Semantic",
        ("PAST", "PRES"),
        2,
        "tense of the main-clause verb",
    ),
    ProbingTask(
        "subjnum",
        "SubjNum",
        "subj_number.txt",
        "Semantic",
        ("NN", "NNS"),
        2,
        "number of the main clause's subject",
    ),
    ProbingTask(
        "objnum",
        "ObjNum",
        "obj_number.txt",
        "Semantic",
        ("NN", "NNS"),
        2,
        "number of the main clause's direct object",
    ),
    ProbingTask(
        "somo",
        "SOMO",
        "odd_man_out.txt",
        "Semantic",
        ("O", "C"),
        2,
        "was a noun or verb replaced by another of similar frequency (C) or not (O)",
    ),
    ProbingTask(
        "coordinv",
        "CoordInv",
        "coordination_inversion.txt",
        "Semantic",
        ("O", "I"),
        2,
        "are two coordinated main clauses in their original order (O) or inverted (I)",
    ),
)

BY_NAME = {task.name: task for task in TASKS}
GROUP = "senteval_probing"
TOPCONST_OTHER = "OTHER"
# Official sizes per split (Conneau et al. §3: 100k train, 10k dev, 10k test, balanced).
OFFICIAL_SIZES = {"tr": 100_000, "va": 10_000, "te": 10_000}
