"""The sweep's tables (Markdown, LaTeX) and figure (PNG), rebuilt from its results.json alone.

Files written into ``out``:

* ``controlled.statements.{md,tex}``: the three statements of Chen et al. §3.3.1 per
  dataset, each "reproduced / not reproduced / inconclusive" with its statistic and 95 %
  bootstrap interval over repeats (statements.py);
* ``controlled.{dataset}.{curve}.{md,tex}``: every setting — target, fitted w and s, the
  table's locality and symmetry, mean test accuracy over repeats, its standard deviation
  and range — the numbers behind Figure 3 (MR) and Figure A1 (SUBJ);
* ``controlled.png``: accuracy against locality and against symmetry, mean with a +-1 sd
  band, and BERT's reference lines (the paper's value, the harness-measured one).

Every caption names the vectors (e.g. "word2vec stand-in", never GloVe when it is not)
and our reading of what the paper leaves unsaid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from posharness.tasks.controlled.statements import check_statements

_NAMES = {"mr": "MR", "subj": "SUBJ"}


def caption(result: dict[str, Any]) -> str:
    c = result["config"]
    t = c["train"]
    return (
        f"Chen et al. (2023) §3.3.1 controlled experiment with {result['vectors']['name']} "
        f"vectors ({result['vectors']['dimension']}d, frozen). One-layer one-head fixed Eq. 8 "
        f"attention (Listing 2) at {c['max_length']} positions; our reading: {c['pooling']} "
        f"pooling, dropout {t['dropout']} on the pooled vector, linear classifier, Adam "
        f"{t['lr']} x{t['lr_decay']} per epoch, batch {t['batch_size']}, {t['epochs']} epochs, "
        f"best dev epoch scored on test, {t['repeats']} repeats; fixed 80/10/10 split; "
        f"out-of-vocabulary words {'as zero vectors' if c['oov'] == 'zero' else 'dropped'}; "
        f"sentences truncated to {c['max_length']} tokens."
    )


def _fmt_interval(i: dict[str, float], scale: float = 1.0) -> str:
    return f"{i['value'] * scale:+.3f} [{i['low'] * scale:+.3f}, {i['high'] * scale:+.3f}]"


def _statement_number(row: dict[str, Any]) -> str:
    if "rho" in row:
        return f"rho {_fmt_interval(row['rho'])}"
    if "drop" in row:
        return (
            f"slope/0.1 below {_fmt_interval(row['slope_below'], 0.1)}, above "
            f"{_fmt_interval(row['slope_above'], 0.1)}"
        )
    if "rho_below" in row:
        return (
            f"rho below {_fmt_interval(row['rho_below'])}, above {_fmt_interval(row['rho_above'])}"
        )
    return row.get("note", "")


def _curve_rows(curve: dict[str, Any]) -> list[list[str]]:
    acc = np.asarray(curve["test_accuracy"]) * 100
    rows = []
    for k, s in enumerate(curve["settings"]):
        col = acc[:, k]
        rows.append(
            [
                f"{s['target_locality']:.3f}",
                f"{s['target_symmetry']:.3f}",
                f"{s['w']:.4g}",
                f"{s['s']:.4g}",
                f"{s['locality']:.3f}",
                f"{s['symmetry']:.3f}",
                f"{col.mean():.2f}",
                f"{col.std(ddof=1) if len(col) > 1 else 0:.2f}",
                f"{col.min():.2f}–{col.max():.2f}",
            ]
        )
    return rows


_CURVE_HEAD = [
    "target loc.",
    "target sym.",
    "w",
    "s",
    "locality",
    "symmetry",
    "test acc. (mean)",
    "sd",
    "range",
]
_STATEMENT_HEAD = ["dataset", "statement", "statistic [95% CI over repeats]", "verdict"]


def _markdown(head: list[str], rows: list[list[str]], title: str, note: str) -> str:
    lines = [f"# {title}", "", note, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _latex(head: list[str], rows: list[list[str]], title: str, note: str) -> str:
    def esc(text: str) -> str:
        for a, b in (
            ("\\", "\\textbackslash{}"),
            ("&", "\\&"),
            ("%", "\\%"),
            ("_", "\\_"),
            ("#", "\\#"),
            ("–", "--"),
        ):
            text = text.replace(a, b)
        return text

    body = [" & ".join(esc(c) for c in row) + " \\\\" for row in rows]
    return "\n".join(
        [
            "\\begin{table}[t]",
            "\\centering",
            "\\small",
            "\\begin{tabular}{" + "l" * len(head) + "}",
            "\\toprule",
            " & ".join(esc(h) for h in head) + " \\\\",
            "\\midrule",
            *body,
            "\\bottomrule",
            "\\end{tabular}",
            f"\\caption{{{esc(title)}. {esc(note)}}}",
            "\\end{table}",
            "",
        ]
    )


def statement_rows(result: dict[str, Any]) -> list[list[str]]:
    return [
        [_NAMES.get(r["dataset"], r["dataset"]), r["statement"], _statement_number(r), r["verdict"]]
        for r in check_statements(result)
    ]


def write_tables(result: dict[str, Any], out: Path) -> list[Path]:
    """Every table and the figure of ``result`` into ``out``; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    note = caption(result)
    written = []
    rows = statement_rows(result)
    title = "Chen et al. 2023 §3.3.1 statements (Figure 3, Figure A1)"
    for suffix, render in ((".md", _markdown), (".tex", _latex)):
        path = out / f"controlled.statements{suffix}"
        path.write_text(render(_STATEMENT_HEAD, rows, title, note))
        written.append(path)
    for key, curve in result["curves"].items():
        dataset, kind = key.split("/")
        figure = "Figure 3" if dataset == "mr" else "Figure A1"
        done, planned = (
            len(curve["settings"]),
            curve.get("planned_settings", len(curve["settings"])),
        )
        title = (
            f"{_NAMES.get(dataset, dataset)}: test accuracy (%) against {kind} ({figure}; "
            f"{done} of {planned} planned settings)"
        )
        for suffix, render in ((".md", _markdown), (".tex", _latex)):
            path = out / f"controlled.{dataset}.{kind}{suffix}"
            path.write_text(render(_CURVE_HEAD, _curve_rows(curve), title, note))
            written.append(path)
    written.append(write_figure(result, out / "controlled.png"))
    return written


def write_figure(result: dict[str, Any], path: Path) -> Path:
    """Accuracy against locality and symmetry per dataset, with BERT's reference lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(result["curves"])
    datasets = sorted({k.split("/")[0] for k in keys}, key=list(_NAMES).index)
    kinds = [k for k in ("locality", "symmetry") if any(key.endswith(k) for key in keys)]
    fig, axes = plt.subplots(
        len(datasets), len(kinds), figsize=(5 * len(kinds), 3.4 * len(datasets)), squeeze=False
    )
    refs = result.get("references", {})
    for i, dataset in enumerate(datasets):
        for j, kind in enumerate(kinds):
            ax = axes[i][j]
            curve = result["curves"].get(f"{dataset}/{kind}")
            if curve is None:
                ax.set_visible(False)
                continue
            x = np.array([s[kind] for s in curve["settings"]])
            acc = np.asarray(curve["test_accuracy"]) * 100
            mean, sd = acc.mean(0), acc.std(0, ddof=1) if acc.shape[0] > 1 else acc.std(0)
            ax.plot(x, mean, ".-", lw=1, ms=3, label=f"mean of {acc.shape[0]} repeats")
            ax.fill_between(x, mean - sd, mean + sd, alpha=0.25, label="±1 sd")
            paper = refs.get("paper", {}).get(kind)
            if paper is not None:
                ax.axvline(paper, color="orange", ls="-", label=f"BERT, paper ({paper})")
            harness = refs.get("measured", {})
            value = harness.get("symmetry_magnitude" if kind == "symmetry" else "locality")
            if value is not None:
                ax.axvline(value, color="gray", ls="--", label=f"MiniLM, harness ({value:.3f})")
            ax.set_xlabel(
                kind
                + (
                    " (symmetry 1)"
                    if kind == "locality"
                    else f" (locality {result['config']['symmetry_locality']})"
                )
            )
            ax.set_ylabel(f"{_NAMES.get(dataset, dataset)} test accuracy (%)")
            ax.legend(fontsize=7)
    fig.suptitle(f"Controlled sweep, {result['vectors']['name']} vectors", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path
