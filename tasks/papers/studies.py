"""The seed papers' studies, written as study files by ``posharness reproduce``.

Each study puts the paper's own baselines (as zoo PEs) beside the PEs a user names, runs
the paper's tasks in the modes its tables show, and fills its tables. The recipe sets the
scale: ``bert-base`` and ``cramming`` keep the papers' protocols; ``mini`` is bounded to
what two CPU cores finish in about two hours (a tiny model, a few hundred steps, limited
evaluation sets, the quick fine-tuning protocol), and says so in the file and in every
caption. The file is written before it runs, so it can be read, edited and rerun.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Scale:
    """How big a reproduction is: the pretraining and the evaluation budget."""

    size: str
    steps: int | None  # None: the recipe's own (or its time budget)
    limit: int | None  # evaluation examples per task
    train_limit: int | None  # fine-tuning examples
    protocol: str | None  # None: each paper's own fine-tuning protocol
    notes: tuple[str, ...] = ()
    recipe: str | None = None  # the pretraining recipe (models/pretrain); None: the scale's name
    bounded: bool = False  # a CPU-sized scale: the papers' mini baselines only

    def pretrain_recipe(self, name: str) -> str:
        return self.recipe or name


SCALES: dict[str, Scale] = {
    "smoke": Scale(
        size="tiny",
        steps=20,
        limit=50,
        train_limit=200,
        protocol="quick",
        recipe="mini",
        bounded=True,
        notes=(
            "A smoke test of the whole path (pretraining, every task, the tables, the "
            "report) in minutes on 2 CPU cores: size tiny, 20 pretraining steps of the mini "
            "recipe, at most 50 evaluation and 200 fine-tuning examples per task, the quick "
            "protocol. Its numbers are not findings: the models have not learned anything.",
        ),
    ),
    "mini": Scale(
        size="tiny",
        steps=500,
        limit=500,
        train_limit=2000,
        protocol="quick",
        bounded=True,
        notes=(
            "Bounded to about two hours on 2 CPU cores: size tiny, 500 pretraining steps of "
            "the mini recipe, at most 500 evaluation and 2,000 fine-tuning examples per "
            "task, the quick fine-tuning protocol; not a number to compare with the "
            "published rows, which are BERT-base scale.",
        ),
    ),
    "cramming": Scale(size="base", steps=None, limit=None, train_limit=None, protocol=None),
    "bert-base": Scale(size="base", steps=None, limit=None, train_limit=None, protocol=None),
}

SNLI_SUBSET = "snli/train_subset_1pct/snli_1.0_train_0.01.jsonl"


@dataclass(frozen=True)
class PaperStudy:
    name: str
    baselines: tuple[tuple[str, str], ...]  # (zoo name, label), the first the test baseline
    tables: tuple[str, ...]
    # [[run]] sections, before the scale's limits; "task_args" joins those the scale sets
    runs: tuple[Mapping[str, Any], ...]
    protocol: str  # the paper's fine-tuning protocol
    notes: tuple[str, ...] = ()
    mini_baselines: tuple[str, ...] = ()  # the baselines kept at the mini scale ((): all)


STUDIES: dict[str, PaperStudy] = {
    "chen2023": PaperStudy(
        name="chen2023",
        baselines=(("bert-a", "BERT"), ("bert-a-star", "BERT-A*"), ("bert-a-star-s", "BERT-A*-s")),
        mini_baselines=("bert-a", "bert-a-star"),
        tables=(
            "chen2023.table1",
            "chen2023.table3",
            "chen2023.fig2",
            "chen2023.table9",
            "chen2023.tablea3",
            "chen2023.draft_table2",
        ),
        runs=(
            {
                "tasks": ["locality_symmetry", "toeplitz", "dep_heads", "senteval_probing"],
                "modes": ["both", "contextual", "positional"],
                # Table A3's averages include Root (tasks/papers/chen2023.py)
                "task_args": {"dep_heads": {"score_root": "true"}},
            },
            {"tasks": ["snli", "shuffle"], "modes": ["both"]},
            {"tasks": ["chen10"], "modes": ["both"]},
        ),  # fmt: skip
        protocol="chen2023",
        notes=(
            "Dependency heads on UD English EWT gold trees, not spaCy-parsed MRPC.",
            "SentEval probing needs the official probing files (or `posharness build-probes "
            "senteval`); MNLI, QQP and QNLI's train split are not on every machine: "
            "columns without data read 'data missing'.",
        ),
    ),
    # The ICLR draft's tables the final paper dropped: sequence combination (Table 3) and
    # the ablations of Eq. 2 (Table 7), over Table 1's ten tasks.
    "chen2023-draft": PaperStudy(
        name="chen2023-draft",
        baselines=(
            ("bert-a", "BERT"),
            ("bert-a-star", "A*"),
            ("bert-a-star-seq", "A*-Seq"),
            ("alibi-softmax", "ALiBi"),
            ("alibi-seq", "ALiBi-Seq"),
            ("bert-only-c", "BERT-only-c"),
            ("bert-only-p", "BERT-only-p"),
        ),
        mini_baselines=("bert-a", "bert-a-star", "bert-a-star-seq"),
        tables=("chen2023.draft_table3", "chen2023.draft_table7"),
        runs=({"tasks": ["chen10"], "modes": ["both"]},),
        protocol="chen2023",
        notes=("MNLI, QQP and QNLI's train split are not on every machine: 'data missing'.",),
    ),
    "tupe2021": PaperStudy(
        name="tupe2021",
        baselines=(
            ("bert-a", "BERT-A"),
            ("bert-r", "BERT-R"),
            ("tupe-a", "TUPE-A"),
            ("tupe-r", "TUPE-R"),
        ),  # fmt: skip
        tables=("tupe2021.glue",),
        runs=({"tasks": ["glue"], "modes": ["both"]},),
        protocol="tupe2021",
        notes=("MNLI, QQP and QNLI's train split are not on every machine: 'data missing'.",),
    ),
    "tisa2021": PaperStudy(
        name="tisa2021",
        baselines=(("bert-a", "BERT-A"), ("tisa", "TISA"), ("tisa-ape", "TISA+APE")),
        tables=("tisa2021.toeplitz", "chen2023.fig2"),
        runs=({"tasks": ["toeplitz", "locality_symmetry"], "modes": ["both", "positional"]},),
        protocol="quick",
    ),
}


def study_text(
    paper: str,
    pes: Sequence[str],
    recipe: str,
    corpus: str,
    data_dir: str | None,
    executor: str = "serial",
) -> str:
    """The study file of ``paper`` at ``recipe``'s scale with ``pes`` beside its baselines."""
    study, scale = STUDIES[paper], SCALES[recipe]
    kept = study.baselines
    if scale.bounded and study.mini_baselines:
        kept = tuple(b for b in study.baselines if b[0] in study.mini_baselines)
    models = list(kept) + [(pe, pe) for pe in pes if pe not in {name for name, _ in kept}]
    notes = [*scale.notes, *study.notes]
    if data_dir is not None and scale.bounded and any("snli" in r["tasks"] for r in study.runs):
        notes.append("The SNLI classifier is trained on SNLI's 1 % train subset (5,502 pairs).")
    lines = [
        f"# posharness reproduce {paper} --recipe {recipe}: edit freely and rerun with",
        f"# `posharness study run {paper}-{recipe}.toml` (docs/studies.md).",
        "[study]",
        f"name = {_value(f'{paper}-{recipe}')}",
        f"tables = {_value(list(study.tables))}",
        f"baselines = {_value([kept[0][1]])}",
        "allow_missing = true",
        f"notes = {_value(notes)}",
        "",
    ]
    for name, label in models:
        lines += ["[[model]]", f"name = {_value(name)}", f"label = {_value(label)}", ""]
    pretrain: dict[str, Any] = {
        "recipe": scale.pretrain_recipe(recipe),
        "size": scale.size,
        "corpus": corpus,
    }
    if scale.steps is not None:
        pretrain["steps"] = scale.steps
        pretrain["save_every"] = max(1, scale.steps // 5)  # a kill loses a fifth at most
    lines += ["[pretrain]", *(f"{k} = {_value(v)}" for k, v in pretrain.items()), ""]
    for run in study.runs:
        lines += ["[[run]]", *_run_lines(run, study, scale, data_dir, executor), ""]
    return "\n".join(lines)


def _run_lines(
    run: Mapping[str, Any], study: PaperStudy, scale: Scale, data_dir: str | None, executor: str
) -> list[str]:
    values: dict[str, Any] = {key: value for key, value in run.items() if key != "task_args"}
    if data_dir is not None:
        values["data_dir"] = data_dir
    for key in ("limit", "train_limit"):
        if getattr(scale, key) is not None:
            values[key] = getattr(scale, key)
    if executor != "serial":
        values["executor"] = executor
    task_args = {task: dict(args) for task, args in run.get("task_args", {}).items()}
    fine_tunes = {"snli", "shuffle", "chen10", "glue"} & set(run["tasks"])
    for group in sorted(fine_tunes - {"shuffle"}):
        task_args[group] = {"protocol": scale.protocol or study.protocol}
    if "snli" in run["tasks"] and data_dir is not None and scale.limit is not None:
        task_args["snli"]["train"] = f"{data_dir}/{SNLI_SUBSET}"
    lines = [f"{key} = {_value(value)}" for key, value in values.items()]
    if task_args:
        lines.append(f"task_args = {_value(task_args)}")
    return lines


def _value(value: Any) -> str:
    """A TOML value: strings and lists as JSON (valid TOML), tables inline."""
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)
