"""Chen, Varoquaux, Suchanek 2023 (EMNLP Findings) as study tables: Table 1 (downstream
suite), Table 3 (locality, symmetry and the word-swap probes), Fig. 2 (the locality-symmetry
plane), Table A3 (dependency heads per attention mode), and their ICLR draft's Table 9
(SentEval probing per mode). Published numbers: ``published/chen2023*.toml``.
"""

from __future__ import annotations

from dataclasses import replace

from posharness.study.table_spec import StudyColumn, StudyTable
from posharness.tasks.papers import published

MODES = ("both", "contextual", "positional")

TABLE1_COLUMNS = (
    StudyColumn("mr", "MR", "mr", "accuracy"),
    StudyColumn("subj", "SUBJ", "subj", "accuracy"),
    StudyColumn("sst2", "SST-2", "sst2", "accuracy"),
    StudyColumn("qnli", "QNLI", "qnli", "accuracy"),
    StudyColumn("rte", "RTE", "rte", "accuracy"),
    StudyColumn("mnli", "MNLI", "mnli", "matched_accuracy"),
    StudyColumn("mrpc", "MRPC", "mrpc", "accuracy"),
    StudyColumn("qqp", "QQP", "qqp", "accuracy"),
    StudyColumn("stsb", "STS-B", "stsb", "spearman"),
    StudyColumn("sickr", "SICK-R", "sickr", "spearman"),
)

LOCALITY = StudyColumn("locality", "Locality", "locality_symmetry", "locality")
SYMMETRY = StudyColumn("symmetry", "Symmetry", "locality_symmetry", "symmetry")

# Table 3's order; Δ = shuffled - original accuracy on the same pairs, x100 = points.
TABLE3_COLUMNS = (
    SYMMETRY,
    LOCALITY,
    StudyColumn("original", "Original", "snli", "accuracy"),
    StudyColumn("shuffle_3", "Shuffle-3 (Δ)", "shuffle_3", "delta"),
    StudyColumn("shuffle_4", "Shuffle-4 (Δ)", "shuffle_4", "delta"),
    StudyColumn("shuffle_5", "Shuffle-5 (Δ)", "shuffle_5", "delta"),
    StudyColumn("random", "Random (Δ)", "shuffle_random", "delta"),
    StudyColumn("original_sr", "Original (SR)", "shuffle_sr", "original_accuracy"),
    StudyColumn("shuffle_sr", "Shuffle-SR (Δ)", "shuffle_sr", "delta"),
)

# The draft's Table 9 order: surface, syntactic, semantic.
TABLE9_COLUMNS = (
    StudyColumn("sentlen", "SentLen", "sentlen", "accuracy"),
    StudyColumn("wc", "WC", "wc", "accuracy"),
    StudyColumn("treedepth", "TreeDepth", "treedepth", "accuracy"),
    StudyColumn("topconst", "TopConst", "topconst", "accuracy"),
    StudyColumn("bshift", "BShift", "bshift", "accuracy"),
    StudyColumn("tense", "Tense", "tense", "accuracy"),
    StudyColumn("subjnum", "SubjNum", "subjnum", "accuracy"),
    StudyColumn("objnum", "ObjNum", "objnum", "accuracy"),
    StudyColumn("somo", "SOMO", "somo", "accuracy"),
    StudyColumn("coordinv", "CoordInv", "coordinv", "accuracy"),
)

# Table A3 transposed: the paper's rows Macro Avg / short / long become column groups, its
# columns contextual / positional / both become each column's fixed mode.
_A3_GROUPS = (
    ("macro", "Macro Avg", "macro"),
    ("short", "short", "macro_short"),
    ("long", "long", "macro_long"),
)
TABLEA3_COLUMNS = tuple(
    StudyColumn(f"{key}_{mode}", f"{label} ({mode})", "dep_heads", metric, mode=mode)
    for key, label, metric in _A3_GROUPS
    for mode in ("contextual", "positional", "both")
)


def table1() -> StudyTable:
    return StudyTable(
        id="chen2023.table1",
        title="Chen et al. 2023, Table 1: ten downstream tasks",
        columns=TABLE1_COLUMNS,
        source=published.source("chen2023", "table1"),
        published=published.rows("chen2023", "table1"),
        average="Avg",
        caption=(
            "Dev scores x100: accuracy, Spearman for STS-B and SICK-R; MNLI: matched dev (the "
            "paper prints one MNLI number without saying which). The paper's protocol is chen2023 "
            "(--task-arg X.protocol=chen2023; the one ours used is named below): one fine-tuning "
            "run per learning rate in {9e-5, 7e-5, 5e-5, 3e-5, 1e-5}, the score is the mean over "
            "the five rates, as the paper's. The paper does not state epochs or batch size for "
            "Table 1; the protocol uses its SNLI recipe (3 epochs, batch 32). Avg: mean of the ten "
            "columns."
        ),
    )


def table3() -> StudyTable:
    return StudyTable(
        id="chen2023.table3",
        title="Chen et al. 2023, Table 3: locality, symmetry and word-swap probes",
        columns=TABLE3_COLUMNS,
        source=published.source("chen2023", "table3"),
        published=published.rows("chen2023", "table3"),
        caption=(
            "Symmetry and Locality x100 of the identical-word-probe attention (100 words repeated "
            "to 128 tokens, averaged over heads and layers). Original: SNLI test accuracy of the "
            "SNLI classifier; Shuffle-x, Random and Shuffle-SR: Δ = shuffled - original accuracy "
            "on the same pairs, in points (negative = worse); Original (SR): accuracy on the "
            "Shuffle-SR pairs before the swap. The paper's first Original is on its Shuffle-x "
            "subset, ours on the whole test set. The paper fine-tunes on all of SNLI train (3 "
            "epochs, lr 2e-5, batch 32)."
        ),
    )


def fig2() -> StudyTable:
    return StudyTable(
        id="chen2023.fig2",
        title="Chen et al. 2023, Fig. 2: locality and symmetry of each encoding",
        columns=(LOCALITY, SYMMETRY),
        source=replace(
            published.source("chen2023", "table3"), table="Fig. 2 (published points: Table 3)"
        ),
        published=published.rows("chen2023", "table3", keys=("locality", "symmetry")),
        modes=MODES,
        kind="scatter",
        caption=(
            "One point per model and attention mode: locality (x) against symmetry (y), x100, of "
            "the identical-word-probe attention. Fig. 2 itself plots fixed (sinusoidal, RoPE, "
            "ALiBi) and learned encodings before and after pre-training without printing numbers; "
            "the published points are the models of Table 3."
        ),
    )


def tablea3() -> StudyTable:
    return StudyTable(
        id="chen2023.tablea3",
        title="Chen et al. 2023, Table A3: dependency heads per attention mode",
        columns=TABLEA3_COLUMNS,
        source=published.source("chen2023", "tablea3"),
        published=published.rows("chen2023", "tablea3"),
        caption=(
            "Best head per dependency relation (Clark et al. 2019), x100, macro-averaged over the "
            "20 most frequent relations, and over the short (mean distance <= 4 words) and long "
            "ones; each column reads the model in one attention mode. The paper scores TUPE-A on "
            "MRPC parsed by spaCy (ClearNLP labels); dep_heads scores gold UD trees by default, "
            "whose relation set differs, so the per-relation rows are not compared here (each "
            "mode's acc_RELATION values are on the boards)."
        ),
        substitutes={
            column.key: "UD English EWT test, gold trees (paper: MRPC parsed by spaCy)"
            for column in TABLEA3_COLUMNS
        },
    )


def table9() -> StudyTable:
    return StudyTable(
        id="chen2023.table9",
        title="Chen et al. (ICLR draft), Table 9: SentEval probing per attention mode",
        columns=TABLE9_COLUMNS,
        source=published.source("chen2023-draft", "table9"),
        published=published.rows("chen2023-draft", "table9"),
        modes=MODES,
        digits=2,
        caption=(
            "SentEval probing (Conneau et al. 2018), test accuracy x100: a classifier on the "
            "mean-pooled states of each layer of the frozen model, the best layer on dev. Rows per "
            "attention mode: both (as trained), contextual (-c), positional (-p). The published "
            "numbers are the ICLR draft's Table 9; the final paper shows them only as a figure "
            "(Fig. A2)."
        ),
    )


def tables() -> tuple[StudyTable, ...]:
    return (table1(), table3(), fig2(), table9(), tablea3())
