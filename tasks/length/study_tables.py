"""The length table of a study (issue 32, part 5): passkey retrieval at each default
length and the drift of the attention's geometry with length, one row per model and mode.

Declared through ``posharness.study_tables`` like the papers' tables. There are no
published rows: LongEmbed (Zhu et al. 2024) scores embedding models, not the PEs of a
study at a shared recipe. ``length_mlm`` is scored at multiples of each model's own
training length, so its columns differ between models; its figure and board carry it.
"""

from __future__ import annotations

from posharness.study.table_spec import PublishedSource, StudyColumn, StudyTable
from posharness.tasks.length.passkey import DEFAULT_LENGTHS, length_metric

# length_geometry's headline drifts: locality read against the uniform map's at each length
# (its raw drift mostly measures the flat map's own fall, ~3/L), symmetry and Toeplitz R²
# as they are (the uniform map scores 1 on both at every length)
DRIFTS = (
    ("locality_excess_drift", "Δ locality over flat"),
    ("symmetry_drift", "Δ symmetry"),
    ("attention_r2_drift", "Δ Toeplitz R²"),
)


def tables() -> tuple[StudyTable, ...]:
    lengths = [int(length) for length in DEFAULT_LENGTHS.split(",")]
    passkey = tuple(
        StudyColumn(f"passkey{n}", f"passkey {n}", "passkey", length_metric(n), in_average=True)
        for n in lengths
    )
    drifts = tuple(
        StudyColumn(metric, label, "length_geometry", metric, in_average=False)
        for metric, label in DRIFTS
    )
    return (
        StudyTable(
            id="length.passkey",
            title="Length generalisation: passkey retrieval and geometry drift",
            columns=passkey + drifts,
            source=PublishedSource(
                paper="Zhu et al. 2024, LongEmbed (passkey protocol)",
                table="none",
                page="none",
                scale="no published rows",
            ),
            modes=("both", "contextual", "positional"),
            average="passkey mean",
            caption=(
                "Passkey nDCG@1 x100 at each document length in tokens (LongEmbed's "
                "protocol, 50 queries and 100 documents per length, mean pooling; chance 1) "
                "and the drift x100 from the shortest to the longest scored length "
                "(length_geometry) of the identical-word probe's locality in excess of a "
                "uniform map's at the same length (0: it falls as a flat map's does), and "
                "of its symmetry and Toeplitz R². A length past a model's positions reads "
                "'n/a'. passkey mean: over the four lengths."
            ),
        ),
    )
