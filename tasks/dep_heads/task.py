"""``dep_heads``: attention heads as dependency parsers, per relation and attention mode.

Clark et al. (2019) ask whether any single head finds a relation's head word; Chen et al.
(2023, §3.4, Table A3, Fig. 5) ask it per attention mode and find positional heads win
short relations and contextual heads long ones. Trees come from a gold CoNLL-U treebank
(UD English EWT under ``--data-dir`` by default) or from raw text parsed by a spaCy
pipeline. One cell scores one mode; :meth:`DepHeads.summarize` puts the modes side by side
as Table A3 and draws Fig. 5.

Options (``--task-arg dep_heads.KEY=VALUE``):

* ``treebank`` — a CoNLL-U file [default: ``<data-dir>/ud_english_ewt/en_ewt-ud-test.conllu``];
* ``text`` + ``spacy_model`` — a plain-text file (one document per line) and the spaCy
  pipeline (package name or folder) that parses it, instead of a treebank;
* ``select_treebank`` — pick each relation's head on this CoNLL-U file and score it on the
  input (e.g. pick on dev, score on test); without it the held-out score cross-fits two
  folds of the input;
* ``from_word`` — ``mean`` of a split word's piece rows (the paper) or ``first`` piece
  (the released code);
* ``relations`` — ``collapsed`` UD subtypes (``nmod:poss`` → ``nmod``) or ``full`` labels
  in the table (both sets are always in ``details``);
* ``top`` — the table's relations: the N most frequent (0 = every relation);
* ``short_distance`` — relations whose mean distance is at most this are "short";
* ``max_length`` — longest model input in pieces (0 = the model's limit); longer
  sentences are split into windows, never dropped;
* ``score_root`` — also score the root relation as Chen et al.'s Table A3 does (Root at
  distance 0.0: spaCy's root is its own head, so a head is right when the root word's
  argmax is the word itself) and add ``acc_root``, ``macro_with_root``,
  ``macro_short_with_root`` and ``macro_long_with_root``; off by default, and every other
  metric is the same either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from posharness.base.errors import DataError, OptionError
from posharness.contracts.adapter import ATTENTIONS, ModelAdapter
from posharness.contracts.task import TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption

DEFAULT_TREEBANK = Path("ud_english_ewt") / "en_ewt-ud-test.conllu"
TABLE_SETS = ("collapsed", "full")
HEADLINE = (
    "macro",
    "macro_short",
    "macro_long",
    "macro_held_out",
    "macro_no_punct",
    "all_arcs",
    "all_words",
    "baseline_macro",
)
OPTIONS: tuple[TaskOption, ...] = (
    TaskOption("treebank", "", "CoNLL-U file to score [default: EWT test under --data-dir]."),
    TaskOption("text", "", "Raw text to parse instead (one document per line)."),
    TaskOption("spacy_model", "en_core_web_sm", "spaCy pipeline (name or folder) for text."),
    TaskOption("select_treebank", "", "CoNLL-U file on which heads are picked (held out)."),
    TaskOption("from_word", "mean", "Attention from a split word: mean or first piece row."),
    TaskOption("relations", "collapsed", "Label set of the table: collapsed or full."),
    TaskOption("top", 20, "Relations in the table, most frequent first; 0 = every relation."),
    TaskOption("short_distance", 4.0, "Mean distance (words) at or below which it is short."),
    TaskOption("max_length", 0, "Longest input in pieces; 0 = the model's limit."),
    TaskOption("figures", True, "Draw the accuracy-by-distance figure."),
    TaskOption(
        "score_root",
        False,
        "Also score root words onto themselves (Chen et al. Table A3's Root) and average "
        "with root: acc_root, macro_with_root, macro_short_with_root, macro_long_with_root.",
    ),
)


@dataclass(frozen=True)
class Input:
    """Where the trees come from, and the identity of that content."""

    kind: str  # "treebank" | "text"
    path: Path
    identity: str  # sha256 of the file (and the parser's identity for text)
    pipeline: str | None = None


def _check_options(options: dict[str, Any]) -> None:
    from posharness.tasks.dep_heads.word_attention import FROM_WORD_RULES

    if options["from_word"] not in FROM_WORD_RULES:
        raise OptionError(
            f"dep_heads.from_word={options['from_word']!r}: choose "
            f"{' or '.join(FROM_WORD_RULES)} (mean of a word's pieces, or its first piece)"
        )
    if options["relations"] not in TABLE_SETS:
        raise OptionError(
            f"dep_heads.relations={options['relations']!r}: choose {' or '.join(TABLE_SETS)}"
        )
    if options["top"] < 0 or options["max_length"] < 0:
        raise OptionError("dep_heads.top and dep_heads.max_length must be 0 or more")
    if options["short_distance"] <= 0:
        raise OptionError("dep_heads.short_distance must be a positive number of words")
    if options["treebank"] and options["text"]:
        raise OptionError(
            "dep_heads: give either treebank (gold CoNLL-U) or text (parsed with spaCy), not both"
        )


def _existing(path: Path, option: str) -> Path:
    if not path.is_file():
        raise DataError(f"dep_heads.{option}: {path} is not a file: check the path")
    return path


def resolve_input(options: dict[str, Any], data_dir: Path | None) -> Input:
    """The trees to score; fails fast (at planning) with what to pass when there are none."""
    from posharness.storage.hashing import hash_file

    _check_options(options)
    if options["text"]:
        from posharness.tasks.dep_heads.spacy_parse import pipeline_identity

        path = _existing(Path(options["text"]).expanduser(), "text")
        pipeline = str(options["spacy_model"])
        identity = f"{hash_file(path)}|{pipeline_identity(pipeline)}"
        return Input("text", path, identity, pipeline)
    if options["treebank"]:
        path = _existing(Path(options["treebank"]).expanduser(), "treebank")
    elif data_dir is not None and (Path(data_dir) / DEFAULT_TREEBANK).is_file():
        path = Path(data_dir) / DEFAULT_TREEBANK
    else:
        where = f"{data_dir}/{DEFAULT_TREEBANK}" if data_dir else f"<data-dir>/{DEFAULT_TREEBANK}"
        raise DataError(
            f"dep_heads needs dependency trees and found none at {where}: pass "
            "--task-arg dep_heads.treebank=FILE.conllu, --data-dir with UD English EWT "
            "there, or --task-arg dep_heads.text=FILE.txt to parse raw text with spaCy"
        )
    return Input("treebank", path, hash_file(path))


def _selection(options: dict[str, Any]) -> Path | None:
    if not options["select_treebank"]:
        return None
    return _existing(Path(options["select_treebank"]).expanduser(), "select_treebank")


class DepHeads:
    spec = TaskSpec(
        name="dep_heads",
        version="2",  # 2: head_to_dependent is Clark et al.'s column argmax
        kind="attention-analysis",
        description="Best attention head per dependency relation (Clark et al. 2019; "
        "Chen et al. 2023 Table A3)",
        main_metric="macro",
        headline_metrics=HEADLINE,
        needs=frozenset({ATTENTIONS}),
        data_source="UD English EWT test (CoNLL-U) or spaCy-parsed text",
        options=OPTIONS,
    )

    def data_identity(self, options: dict[str, Any], data_dir: Path | None) -> dict[str, Any]:
        """Hashes of the trees, after a full validation pass: a malformed treebank fails
        here, in a second, before any model is loaded."""
        from posharness.tasks.dep_heads.conllu import scan_conllu

        source = resolve_input(options, data_dir)
        if source.kind == "treebank":
            scan_conllu(source.path)
        selection = _selection(options)
        return {
            "input": source.identity,
            "selection": scan_conllu(selection).sha256 if selection else None,
        }

    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        from posharness.run.flags import degenerate_flags
        from posharness.tasks.dep_heads.conllu import iter_conllu, scan_conllu
        from posharness.tasks.dep_heads.counting import count_heads
        from posharness.tasks.dep_heads.report import relation_report
        from posharness.tasks.dep_heads.scoring import HeadCounts
        from posharness.tasks.dep_heads.tree import base_relation

        options = ctx.options
        source = resolve_input(options, ctx.data_dir)
        treebank = self._trees(source, ctx)
        stats = scan_conllu(treebank)
        total = min(stats.sentences, ctx.limit or stats.sentences)

        score_root = bool(options["score_root"])

        def counted(path: Path, sentences: int, label: str):
            roots = HeadCounts(model.num_layers, model.num_heads) if score_root else None
            counts, coverage = count_heads(
                model,
                ctx,
                islice(iter_conllu(path), sentences),
                sentences,
                str(options["from_word"]),
                int(options["max_length"]),
                label,
                roots,
            )
            return counts, coverage, roots

        counts, coverage, roots = counted(treebank, total, f"dep_heads · {ctx.mode}")
        if coverage.arcs_scored == 0:
            raise DataError(
                f"dep_heads: no scorable arc in {treebank} (every sentence is a lone root "
                "or too long): use a treebank with multi-word sentences"
            )
        selection_path = _selection(options)
        selection = selection_coverage = selection_roots = None
        if selection_path is not None:
            chosen = scan_conllu(selection_path)
            picks = min(chosen.sentences, ctx.limit or chosen.sentences)
            selection, selection_coverage, selection_roots = counted(
                selection_path, picks, "dep_heads · select"
            )
        label_sets = {"full": lambda label: label, "collapsed": base_relation}
        report = relation_report(
            counts,
            selection,
            label_sets,
            table_set=str(options["relations"]),
            top=int(options["top"]),
            short_distance=float(options["short_distance"]),
            root_words=coverage.root_arcs,
            roots=roots,
            roots_selection=selection_roots,
        )
        ctx.artifact_dir.mkdir(parents=True, exist_ok=True)
        artifacts = [counts.save(ctx.artifact_dir / "head_counts.npz").name]
        if roots is not None:
            artifacts.append(roots.save(ctx.artifact_dir / "root_counts.npz").name)
        if treebank.parent == ctx.artifact_dir:
            artifacts.append(treebank.name)  # the spaCy parse that was scored
        metrics, flags = report.metrics(), report.flags()
        if options["figures"]:
            # Flags are known here already (the runner adds only the generic ones, the
            # same function read on the same metrics), so the cell's figure can mark them.
            flagged = bool(flags or degenerate_flags(self.spec.main_metric, metrics, None))
            artifacts.append(self._figure(model, ctx, report.table, flagged).name)
        settings = {
            "input": str(source.path),
            "input_kind": source.kind,
            "treebank": str(treebank),
            "treebank_sha256": stats.sha256,
            "sentences_in_file": stats.sentences,
            "spacy_model": source.pipeline,
            "held_out_selection": str(selection_path) if selection_path else "cross-fit, 2 folds",
            "coverage": coverage.as_dict(),
        }
        if selection_coverage is not None:
            settings["selection_coverage"] = selection_coverage.as_dict()
        if roots is not None:  # a root word without pieces, or lost to windows, is not scored
            scored = int(roots.arcs.sum())
            settings["root_coverage"] = {
                "root_words": coverage.root_arcs,
                "scored": scored,
                "not_scored": coverage.root_arcs - scored,
            }
        return TaskResult(
            metrics=metrics,
            data_hash=stats.sha256[:16],
            details=report.details(),
            artifacts=[Path(a) for a in artifacts],
            settings=settings,
            flags=flags,
        )

    def _trees(self, source: Input, ctx: TaskContext) -> Path:
        """The CoNLL-U file to score: the treebank itself, or the spaCy parse of the text.

        A parse is kept in the cache (keyed by text and pipeline identity), so the three
        modes of one run parse once; with the cache off it goes next to the results.
        """
        if source.kind == "treebank":
            return source.path
        from posharness.storage.hashing import hash_text
        from posharness.tasks.dep_heads.spacy_parse import load_pipeline, parse_text_file

        if ctx.cache.enabled:
            assert ctx.cache.root is not None
            target = ctx.cache.root / "spacy-parses" / f"{hash_text(source.identity)}.conllu"
            if target.exists():
                return target
        else:  # the cell folder outlives a change of text: always parse afresh
            target = ctx.artifact_dir / "parsed.conllu"
        parse_text_file(source.path, load_pipeline(str(source.pipeline)), target)
        return target

    def _figure(self, model: ModelAdapter, ctx: TaskContext, table, flagged: bool) -> Path:
        from posharness.tasks.dep_heads.figures import accuracy_by_distance

        points = [(r.relation, r.mean_distance, r.best.accuracy) for r in table]
        return accuracy_by_distance(
            {str(ctx.mode): points},
            ctx.artifact_dir / "accuracy_by_distance.png",
            f"{model.spec} · {ctx.mode} · best head per relation",
            flagged={str(ctx.mode)} if flagged else (),
        )

    def summarize(self, results: list, folder: Path) -> list[Path]:
        from posharness.tasks.dep_heads.report import write_mode_table

        return write_mode_table(results, folder)
