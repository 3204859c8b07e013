"""What each fine-tune task measures: its metrics, which split picks the epoch, which
splits are reported, and whether SentEval cross-validates it.

GLUE test labels are private, so GLUE tasks report the selection split (dev) at the best
epoch, as both papers do; datasets with a labelled test set (SICK, SST, TREC, SNLI)
select on dev and report test, with the dev score alongside. MR, SUBJ, CR and MPQA have
no split at all: SentEval scores them by 10-fold cross-validation. A profile may derive a
metric from reported ones: MNLI's ``mean_accuracy``, the mean of its matched and mismatched
accuracies, is the number Chen et al. 2023 print for MNLI (App. A.4: "we report the average
score for the two test sets of MNLI").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Profile:
    name: str  # the task name, also the dataset's name in data/catalogue.py
    description: str
    metrics: tuple[str, ...]  # official metrics, computed on every reported split
    main_metric: str  # as reported, i.e. with its split prefix
    select_split: str  # picks the best epoch
    report: Mapping[str, str]  # metric prefix -> split, e.g. {"": "dev"}
    folds: int = 0  # > 0: SentEval cross-validation over the single split "all"
    carve_dev: bool = False  # no dev split: hold out 10 % of train (TREC)
    group: tuple[str, ...] = field(default_factory=tuple)
    # name -> the reported metrics it is the equal-weight mean of, e.g. MNLI's
    # mean_accuracy = (matched_accuracy + mismatched_accuracy) / 2, computed per run
    derived: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    version: str = ""  # its own task version when its results changed ("": the family's)

    @property
    def regression(self) -> bool:
        return "pearson" in self.metrics

    @property
    def selection_metric(self) -> str:
        return self.metrics[0]

    @property
    def headline(self) -> tuple[str, ...]:
        reported = tuple(
            f"{prefix}{m}"
            for prefix in self.report
            if not prefix.startswith("dev_")
            for m in self.metrics
        )
        return reported + tuple(self.derived)

    @property
    def reported(self) -> tuple[str, ...]:
        """Every metric a cell records: each reported split's (``dev_`` ones included,
        e.g. SICK-R's ``dev_spearman``), then the derived ones."""
        split_metrics = tuple(f"{prefix}{m}" for prefix in self.report for m in self.metrics)
        return split_metrics + tuple(self.derived)

    def parts(self, derived: str) -> list[tuple[str, str, str]]:
        """(prefix, split, metric) of each reported metric ``derived`` is the mean of."""
        found = []
        for key in self.derived[derived]:
            prefix = max(
                (p for p in self.report if key.startswith(p) and key[len(p) :] in self.metrics),
                key=len,
            )
            found.append((prefix, self.report[prefix], key[len(prefix) :]))
        return found


_DEV = {"": "dev"}
_TEST = {"": "test", "dev_": "dev"}
_CV = {"": "all"}
ACC = ("accuracy",)


def _p(
    name: str,
    description: str,
    metrics: tuple[str, ...],
    main: str,
    select: str,
    report: Mapping[str, str],
    **kw,
) -> Profile:
    return Profile(name, description, metrics, main, select, report, **kw)


def _cv(name: str, description: str) -> Profile:
    """A SentEval classification task scored by 10-fold cross-validation (no splits)."""
    return _p(name, f"{description} (10-fold CV)", ACC, "accuracy", "all", _CV, folds=10)


PROFILES = {
    p.name: p
    for p in (
        _p(
            "cola",
            "GLUE CoLA acceptability (Matthews corr.)",
            ("matthews", "accuracy"),
            "matthews",
            "dev",
            _DEV,
        ),
        _p("sst2", "GLUE SST-2 sentiment", ACC, "accuracy", "dev", _DEV),
        _p(
            "mrpc",
            "GLUE MRPC paraphrase (accuracy, F1)",
            ("accuracy", "f1"),
            "accuracy",
            "dev",
            _DEV,
        ),
        _p(
            "stsb",
            "GLUE STS-B similarity (Pearson, Spearman)",
            ("spearman", "pearson"),
            "spearman",
            "dev",
            _DEV,
        ),
        _p(
            "qqp",
            "GLUE QQP duplicate questions (accuracy, F1)",
            ("accuracy", "f1"),
            "accuracy",
            "dev",
            _DEV,
        ),
        _p(
            "mnli",
            "GLUE MNLI entailment, matched and mismatched dev",
            ACC,
            "matched_accuracy",
            "dev_matched",
            {"matched_": "dev_matched", "mismatched_": "dev_mismatched"},
            derived={"mean_accuracy": ("matched_accuracy", "mismatched_accuracy")},
            version="2",  # 2: adds mean_accuracy (Chen et al. 2023's MNLI number)
        ),
        _p("qnli", "GLUE QNLI question entailment", ACC, "accuracy", "dev", _DEV),
        _p("rte", "GLUE RTE entailment", ACC, "accuracy", "dev", _DEV),
        _p("wnli", "GLUE WNLI coreference entailment", ACC, "accuracy", "dev", _DEV),
        _cv("mr", "SentEval MR movie-review polarity"),
        _cv("subj", "SentEval SUBJ subjectivity"),
        _cv("cr", "SentEval CR product-review polarity"),
        _cv("mpqa", "SentEval MPQA opinion polarity"),
        _p(
            "trec",
            "SentEval TREC question type (6 classes)",
            ACC,
            "accuracy",
            "dev",
            _TEST,
            carve_dev=True,
        ),
        _p("sst", "SentEval SST binary sentiment", ACC, "accuracy", "dev", _TEST),
        _p(
            "sickr",
            "SentEval SICK-R relatedness (Pearson, Spearman)",
            ("spearman", "pearson"),
            "spearman",
            "dev",
            _TEST,
        ),
        _p("sicke", "SentEval SICK-E entailment", ACC, "accuracy", "dev", _TEST),
        _p(
            "snli",
            "SNLI entailment; the classifier the word-swap probes reuse",
            ACC,
            "accuracy",
            "dev",
            _TEST,
        ),
    )
}

GROUPS = {
    "glue": ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli"),
    "senteval_transfer": ("mr", "subj", "cr", "mpqa", "trec", "sst", "sickr", "sicke"),
    # Chen et al. 2023, Table 1, in the paper's column order.
    "chen10": ("mr", "subj", "sst2", "qnli", "rte", "mnli", "mrpc", "qqp", "stsb", "sickr"),
}
