"""Raw text to dependency trees with a spaCy pipeline: the parsed-text input of the head probe.

Chen et al. (2023) run the dependency-head probe of Clark et al. (2019) on MRPC sentences
parsed with spaCy, so raw text needs the same path: one document per line, each spaCy
sentence a :class:`Sentence`, written once as CoNLL-U so that the probe reads a parsed
file exactly like a gold treebank. spaCy is an optional dependency (``posharness[parse]``)
and is imported only inside the functions that need it.

Relations are kept as the pipeline gives them (ClearNLP labels such as ``nsubj``, ``dobj``,
``pobj`` for spaCy's English pipelines), except spaCy's ``ROOT``, stored as ``root`` like
UD. The pipeline's identity (name, version, content hash) belongs in every cache key built
on its trees, because two versions of one pipeline parse differently.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from posharness.base.errors import DataError, OptionError, OutputError
from posharness.storage.hashing import hash_files
from posharness.storage.io import atomic_target
from posharness.tasks.dep_heads.tree import ROOT, ROOT_RELATION, Sentence, conllu_lines
from posharness.tasks.text_lines import numbered_lines

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Span

INSTALL_HINT = 'pip install "posharness[parse]"'
# Components that never touch the dependency parse: leaving them out makes loading and
# parsing faster. The tagger and attribute_ruler stay, some parsers listen to them.
NOT_NEEDED_FOR_PARSING = (
    "ner",
    "lemmatizer",
    "textcat",
    "textcat_multilabel",
    "entity_linker",
    "entity_ruler",
    "span_finder",
)


@dataclass(frozen=True)
class ParseStats:
    lines: int  # non-blank lines parsed (one document each)
    sentences: int
    words: int


def load_pipeline(name_or_path: str) -> Language:
    """The named spaCy pipeline (installed package or trained folder), ready to parse.

    Fails with one line when spaCy is missing, the pipeline is not found or cannot be
    loaded, or it has no dependency parser (a pipeline without one has no heads to give).
    """
    try:
        import spacy
    except ImportError as error:
        raise OptionError(
            f"parsing raw text needs spaCy, which is not installed ({error}); {INSTALL_HINT}"
        ) from error
    _locate(name_or_path)
    try:
        nlp = spacy.load(name_or_path, exclude=list(NOT_NEEDED_FOR_PARSING))
    except Exception as error:  # a broken pipeline can raise anything; never a traceback
        raise DataError(
            f"spaCy pipeline {name_or_path!r} could not be loaded: "
            f"{type(error).__name__}: {_first_line(error)}"
        ) from error
    parsers = [name for name in nlp.pipe_names if _assigns_heads(nlp, name)]
    if not parsers:
        components = ", ".join(nlp.pipe_names) or "none"
        raise OptionError(
            f"spaCy pipeline {name_or_path!r} has no dependency parser (active components: "
            f"{components}); pass a pipeline with a 'parser' component"
        )
    return nlp


def pipeline_identity(name_or_path: str) -> str:
    """A stable name for the exact pipeline, found without loading its weights.

    An installed package is named by its version (``en_core_web_sm-3.8.0``); a folder by
    its meta.json name and version plus a hash of its files, because a retrained folder
    keeps its name and version. spaCy looks for an installed package first, and so do we.
    """
    location = _locate(name_or_path)
    if location is None:
        return f"{name_or_path}-{importlib.metadata.version(name_or_path)}"
    meta = _read_meta(location)
    name = meta.get("name", "pipeline")
    lang = meta.get("lang")
    full_name = f"{lang}_{name}" if lang and not str(name).startswith(f"{lang}_") else name
    # Hidden files (.DS_Store, .git) are litter, not pipeline: they must not change its name.
    files = [
        path
        for path in location.rglob("*")
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(location).parts)
    ]
    digest = hash_files(files, root=location)
    return f"{full_name}-{meta.get('version', '0.0.0')}@sha256:{digest}"


def parse_lines(
    nlp: Language, lines: Iterable[str], source: str, batch_size: int = 256
) -> Iterator[Sentence]:
    """Each non-blank line parsed as one document, each of its sentences one Sentence.

    Whitespace is collapsed first so spaCy makes no whitespace tokens (they would be
    words with heads in the tree). Documents stream through ``nlp.pipe``, so memory stays
    constant however long the text. Sentence ids are ``<source>:<line>``, with ``.<k>``
    appended for the k-th sentence when a line holds several.
    """
    if isinstance(lines, str):
        raise OptionError("spaCy parse: lines must be an iterable of lines, not one string")
    if batch_size < 1:
        raise OptionError(f"spaCy parse: batch_size={batch_size}; use at least 1")
    documents = _documents(lines, source, nlp.max_length)
    for doc, line in nlp.pipe(documents, as_tuples=True, batch_size=batch_size):
        spans = list(doc.sents)
        for k, span in enumerate(spans, start=1):
            sent_id = f"{source}:{line}" if len(spans) == 1 else f"{source}:{line}.{k}"
            yield _sentence(span, sent_id, line)


def parse_text_file(text_path: Path, nlp: Language, out_path: Path) -> ParseStats:
    """Parse a UTF-8 text file (one document a line) and write its trees as CoNLL-U.

    All or nothing: the CoNLL-U goes to a temporary file beside ``out_path`` that is
    renamed at the end; after any failure neither it nor anything at ``out_path`` is left,
    so a half-parsed file can never be mistaken for a finished one.
    """
    text_path, out_path = Path(text_path), Path(out_path)
    if out_path.resolve() == text_path.resolve():
        raise OptionError(f"{out_path}: the CoNLL-U output would overwrite the text it parses")
    lines = (line for _, line in numbered_lines(text_path))
    return _write_conllu(parse_lines(nlp, lines, source=text_path.name), text_path, out_path)


def _write_conllu(sentences: Iterable[Sentence], text_path: Path, out_path: Path) -> ParseStats:
    """The parse as CoNLL-U, all or nothing; a failed parse also removes an older file."""
    lines = sentence_count = words = 0
    last_line = None
    try:
        with (
            atomic_target(out_path, hint="choose a writable output folder") as partial,
            partial.open("w", encoding="utf-8", newline="\n") as out,
        ):
            for sentence in sentences:
                out.write("\n".join(conllu_lines(sentence)) + "\n")
                sentence_count += 1
                words += len(sentence)
                if sentence.line != last_line:
                    lines += 1
                    last_line = sentence.line
            if sentence_count == 0:
                raise DataError(f"{text_path}: no non-blank line to parse; pass a file of text")
    except OSError as error:
        _remove(out_path)
        raise OutputError(f"{out_path}: cannot write the CoNLL-U file ({error})") from error
    except BaseException:
        _remove(out_path)
        raise
    return ParseStats(lines=lines, sentences=sentence_count, words=words)


def _remove(path: Path) -> None:
    # The error being raised matters more than a leftover we cannot delete.
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def _documents(lines: Iterable[str], source: str, max_length: int) -> Iterator[tuple[str, int]]:
    for number, line in enumerate(lines, start=1):
        text = " ".join(line.split())
        if not text:
            continue
        if len(text) > max_length:
            raise DataError(
                f"{source}:{number}: {len(text)} characters, more than the pipeline's "
                f"nlp.max_length of {max_length}; split the line into shorter documents"
            )
        yield text, number


def _sentence(span: Span, sent_id: str, line: int) -> Sentence:
    """One spaCy sentence as a Sentence with 1-based heads inside the sentence."""
    heads: list[int] = []
    relations: list[str] = []
    for position, token in enumerate(span, start=1):
        if token.head.i == token.i:
            heads.append(ROOT)
            relations.append(ROOT_RELATION)
            continue
        head = token.head.i - span.start + 1
        if not 1 <= head <= len(span):
            raise DataError(
                f"{sent_id}: word {position} ({token.text!r}) has its head outside its "
                "sentence, so the pipeline's sentence boundaries cut its dependency tree "
                "(a sentencizer or senter after the parser?); use a pipeline whose parser "
                "sets the sentences"
            )
        if not token.dep_:
            raise DataError(
                f"{sent_id}: word {position} ({token.text!r}) has no dependency label; "
                "the pipeline's parser did not label it"
            )
        heads.append(head)
        relations.append(token.dep_)
    if heads.count(ROOT) != 1:
        raise DataError(
            f"{sent_id}: {heads.count(ROOT)} root words where a tree has exactly one; "
            "the pipeline's parser produced a broken tree"
        )
    words = tuple(token.text for token in span)
    return Sentence(sent_id, words, tuple(heads), tuple(relations), line)


def _locate(name_or_path: str) -> Path | None:
    """None for an installed package, the folder for a pipeline folder (spaCy's order)."""
    if _is_installed(name_or_path):
        return None
    folder = Path(name_or_path)
    if folder.is_dir():
        return folder
    if folder.exists():
        raise DataError(f"{folder}: a file, not a spaCy pipeline folder; pass the folder")
    raise OptionError(
        f"spaCy pipeline {name_or_path!r} not found: install it with "
        f"`python -m spacy download {name_or_path}` or pass the path of a trained pipeline "
        "folder"
    )


def _is_installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return True


def _read_meta(folder: Path) -> dict:
    meta_path = folder / "meta.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise DataError(
            f"{meta_path}: missing, so {folder} is not a spaCy pipeline folder; pass a folder "
            "written by nlp.to_disk or `spacy train`"
        ) from error
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{meta_path}: not a readable JSON file ({error})") from error
    if not isinstance(meta, dict):
        raise DataError(f"{meta_path}: not a JSON object; the pipeline folder is damaged")
    return meta


def _assigns_heads(nlp: Language, name: str) -> bool:
    meta = nlp.get_pipe_meta(name)
    return meta.factory in {"parser", "beam_parser"} or "token.head" in meta.assigns


def _first_line(error: BaseException) -> str:
    return next((line for line in str(error).splitlines() if line.strip()), "no message")
