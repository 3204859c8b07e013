"""The fine-tuning datasets: GLUE, SentEval transfer tasks and SNLI, and their file layouts.

Label orders follow the hub's GLUE and SNLI class orders, so a model fine-tuned on local
files and one fine-tuned on hub data agree on what class 1 means. GLUE's ``test.tsv``
files carry no labels and are not listed as splits. Hub sources are given only where the
hub copy has the same examples as the local files; SICK on the hub uses a different split
(4,439/495/4,906 pairs instead of SemEval's 4,500/500/4,927) and is left out, as are
SUBJ, CR, MPQA and the sentence-level SST, which have no canonical hub copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from posharness.tasks.finetune.data.hub import HubSource
from posharness.tasks.finetune.data.readers import (
    NO_GOLD_LABEL,
    SentenceListFormat,
    SnliFormat,
    SplitReader,
    TrecFormat,
    TsvFormat,
)
from posharness.tasks.finetune.types import DatasetSpec

GLUE_HINT = "GLUE's download_glue_data.py"
SENTEVAL_HINT = "SentEval's data/downstream/get_transfer_data.bash"
SNLI_HINT = "https://nlp.stanford.edu/projects/snli/"

_ENTAILMENT_3 = ("entailment", "neutral", "contradiction")
_BINARY = {"0": 0, "1": 1}
_GLUE_FILES = {"train": "train.tsv", "dev": "dev.tsv"}
_GLUE_HUB_SPLITS = {"train": "train", "dev": "validation"}


@dataclass(frozen=True)
class _Collection:
    """What every dataset of one collection (GLUE, SentEval, SNLI) shares: the prefix of its
    title, the folder its datasets sit under in --data-dir, and where to download them."""

    title: str
    folder: str
    download_hint: str

    def dataset(
        self,
        name: str,
        title: str,
        folder: str,
        labels: tuple[str, ...],
        splits: tuple[str, ...],
        *,
        hub: HubSource | None = None,
        score_range: tuple[float, float] | None = None,
    ) -> DatasetSpec:
        return DatasetSpec(
            name=name,
            title=f"{self.title} {title}",
            labels=labels,
            splits=splits,
            folder=f"{self.folder}/{folder}",
            download_hint=self.download_hint,
            hub=hub,
            range=score_range,
        )


_GLUE = _Collection("GLUE", "glue_data", GLUE_HINT)
_SENTEVAL = _Collection("SentEval", "senteval/downstream", SENTEVAL_HINT)
_SNLI = _Collection("SNLI", "snli", SNLI_HINT)


def _glue(
    name: str,
    folder: str,
    labels: tuple[str, ...],
    text_a: str,
    text_b: str | None,
    *,
    splits: tuple[str, ...] = ("train", "dev"),
    hub: HubSource | None = None,
    score_range: tuple[float, float] | None = None,
) -> DatasetSpec:
    """A GLUE dataset, titled and stored by its folder name; its hub copy, unless ``hub``
    names another, is the nyu-mll/glue config of its task name."""
    hub = hub or HubSource("nyu-mll/glue", name, _GLUE_HUB_SPLITS, text_a, text_b, "label")
    return _GLUE.dataset(name, folder, folder, labels, splits, hub=hub, score_range=score_range)


_POLARITY = ("negative", "positive")
_TREC_HUB_ORDER = {0: "ABBR", 1: "ENTY", 2: "DESC", 3: "HUM", 4: "LOC", 5: "NUM"}
_MNLI_HUB = HubSource(
    "nyu-mll/glue",
    "mnli",
    {
        "train": "train",
        "dev_matched": "validation_matched",
        "dev_mismatched": "validation_mismatched",
    },
    "premise",
    "hypothesis",
    "label",
)

DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        _glue("cola", "CoLA", ("unacceptable", "acceptable"), "sentence", None),
        _glue("sst2", "SST-2", _POLARITY, "sentence", None),
        _glue("mrpc", "MRPC", ("not_equivalent", "equivalent"), "sentence1", "sentence2"),
        _glue("stsb", "STS-B", (), "sentence1", "sentence2", score_range=(0.0, 5.0)),
        _glue("qqp", "QQP", ("not_duplicate", "duplicate"), "question1", "question2"),
        _glue(
            "mnli",
            "MNLI",
            _ENTAILMENT_3,
            "premise",
            "hypothesis",
            splits=("train", "dev_matched", "dev_mismatched"),
            hub=_MNLI_HUB,
        ),
        _glue("qnli", "QNLI", ("entailment", "not_entailment"), "question", "sentence"),
        _glue("rte", "RTE", ("entailment", "not_entailment"), "sentence1", "sentence2"),
        _glue("wnli", "WNLI", ("not_entailment", "entailment"), "sentence1", "sentence2"),
        _SENTEVAL.dataset(
            "mr",
            "MR",
            "MR",
            _POLARITY,
            ("all",),
            hub=HubSource(
                "cornell-movie-review-data/rotten_tomatoes",
                None,
                {"all": "train+validation+test"},
                "text",
                None,
                "label",
            ),
        ),
        _SENTEVAL.dataset("subj", "SUBJ", "SUBJ", ("objective", "subjective"), ("all",)),
        _SENTEVAL.dataset("cr", "CR", "CR", _POLARITY, ("all",)),
        _SENTEVAL.dataset("mpqa", "MPQA", "MPQA", _POLARITY, ("all",)),
        _SENTEVAL.dataset(
            "trec",
            "TREC",
            "TREC",
            ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"),
            ("train", "test"),
            hub=HubSource(
                "CogComp/trec",
                None,
                {"train": "train", "test": "test"},
                "text",
                None,
                "coarse_label",
                _TREC_HUB_ORDER,
            ),
        ),
        _SENTEVAL.dataset("sst", "SST binary", "SST/binary", _POLARITY, ("train", "dev", "test")),
        _SENTEVAL.dataset(
            "sickr", "SICK-R", "SICK", (), ("train", "dev", "test"), score_range=(1.0, 5.0)
        ),
        _SENTEVAL.dataset("sicke", "SICK-E", "SICK", _ENTAILMENT_3, ("train", "dev", "test")),
        _SNLI.dataset(
            "snli",
            "1.0",
            "snli_1.0",
            _ENTAILMENT_3,
            ("train", "dev", "test"),
            hub=HubSource(
                "stanfordnlp/snli",
                None,
                {"train": "train", "dev": "validation", "test": "test"},
                "premise",
                "hypothesis",
                "label",
            ),
        ),
    )
}

_SICK_FILES = {
    "train": "SICK_train.txt",
    "dev": "SICK_trial.txt",
    "test": "SICK_test_annotated.txt",
}


def _sick(label: str, label_values: dict[str, int] | None = None) -> TsvFormat:
    return TsvFormat(
        _SICK_FILES,
        text_a="sentence_A",
        text_b="sentence_B",
        label=label,
        id_column="pair_ID",
        label_values=label_values,
    )


def _glue_sentence_pairs(label_values: dict[str, int] | None = None) -> TsvFormat:
    """GLUE's plain sentence-pair layout (RTE, WNLI): index, sentence1, sentence2, label."""
    return TsvFormat(
        _GLUE_FILES,
        text_a="sentence1",
        text_b="sentence2",
        label="label",
        label_values=label_values,
        id_column="index",
    )


# How each dataset's splits sit on disk, by dataset name.
READERS: dict[str, SplitReader] = {
    # CoLA train/dev have no header: source, label, original mark, sentence.
    "cola": TsvFormat(_GLUE_FILES, text_a=3, label=1, label_values=_BINARY, header=False, width=4),
    "sst2": TsvFormat(_GLUE_FILES, text_a="sentence", label="label", label_values=_BINARY),
    # MRPC: "Quality  #1 ID  #2 ID  #1 String  #2 String", no index column.
    "mrpc": TsvFormat(
        _GLUE_FILES, text_a="#1 String", text_b="#2 String", label="Quality", label_values=_BINARY
    ),
    "stsb": TsvFormat(
        _GLUE_FILES, text_a="sentence1", text_b="sentence2", label="score", id_column="index"
    ),
    # Rows of the pre-2019 GLUE QQP release were broken by newlines inside questions.
    "qqp": TsvFormat(
        _GLUE_FILES,
        text_a="question1",
        text_b="question2",
        label="is_duplicate",
        label_values=_BINARY,
        id_column="id",
        drop_malformed="row of the wrong width (old GLUE QQP release)",
    ),
    "mnli": TsvFormat(
        {
            "train": "train.tsv",
            "dev_matched": "dev_matched.tsv",
            "dev_mismatched": "dev_mismatched.tsv",
        },
        text_a="sentence1",
        text_b="sentence2",
        label="gold_label",
        drop_labels={"-": NO_GOLD_LABEL},
        id_column="index",
    ),
    "qnli": TsvFormat(
        _GLUE_FILES, text_a="question", text_b="sentence", label="label", id_column="index"
    ),
    "rte": _glue_sentence_pairs(),
    "wnli": _glue_sentence_pairs(_BINARY),
    "mr": SentenceListFormat(("rt-polarity.neg", "rt-polarity.pos")),
    "subj": SentenceListFormat(("subj.objective", "subj.subjective")),
    "cr": SentenceListFormat(("custrev.neg", "custrev.pos")),
    "mpqa": SentenceListFormat(("mpqa.neg", "mpqa.pos")),
    "trec": TrecFormat({"train": "train_5500.label", "test": "TREC_10.label"}),
    "sst": TsvFormat(
        {"train": "sentiment-train", "dev": "sentiment-dev", "test": "sentiment-test"},
        text_a=0,
        label=1,
        label_values=_BINARY,
        header=False,
        width=2,
    ),
    "sickr": _sick("relatedness_score"),
    "sicke": _sick("entailment_judgment", {"ENTAILMENT": 0, "NEUTRAL": 1, "CONTRADICTION": 2}),
    "snli": SnliFormat(
        {
            "train": "snli_1.0_train.jsonl",
            "dev": "snli_1.0_dev.jsonl",
            "test": "snli_1.0_test.jsonl",
        }
    ),
}
