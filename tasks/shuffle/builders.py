"""Pure builders of the SNLI word-swap probes (Chen et al. §3.5, App. A.3, Algorithm 1).

* :func:`shuffle_constituent` (Shuffle-x): permute the words inside one NP/VP/PP/ADVP/ADJP of
  exactly x words; the meaning, and so the label, is kept.
* :func:`shuffle_all` (Random): permute every word of the sentence.
* :func:`swap_roles` (Shuffle-SR): swap agent and patient of a non-auxiliary verb, fixing
  pronoun case; an entailment pair becomes a contradiction.

The paper finds agent and patient with a semantic-role-labelling model; we read them off the
constituency parse SNLI already ships (subject NP of an ``S`` clause and the first NP object
of its main verb), which needs no model and no download. Passives are skipped because there the
subject is the patient. A sentence a builder cannot change raises :class:`NotApplicable` with a
stable ``reason`` the build summary counts. Randomness comes from :func:`rng_for`, keyed by the
premise text, so every pair sharing a premise gets the same shuffle in any process.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from posharness.tasks.shuffle.trees import (
    Constituent,
    Parsed,
    constituents,
    phrases,
    pos_tags,
)

PHRASE_LABELS: tuple[str, ...] = ("NP", "VP", "PP", "ADVP", "ADJP")

# Algorithm 1's subject/object case mapping D, one direction each.
_SUBJECT_TO_OBJECT: dict[str, str] = {
    "i": "me",
    "he": "him",
    "she": "her",
    "we": "us",
    "they": "them",
}
_OBJECT_TO_SUBJECT: dict[str, str] = {obj: subj for subj, obj in _SUBJECT_TO_OBJECT.items()}
CASE_MAP: dict[str, str] = {**_SUBJECT_TO_OBJECT, **_OBJECT_TO_SUBJECT}

_BE_FORMS = frozenset({"be", "am", "is", "are", "was", "were", "been", "being", "'s", "'re", "'m"})
_GET_FORMS = frozenset({"get", "gets", "got", "gotten", "getting"})
# Algorithm 1's auxiliary list A: forms of be/have/do and the modals, PTB clitics included
# ("ca"/"wo" are the tokens of "can't"/"won't").
AUXILIARIES: frozenset[str] = _BE_FORMS | frozenset(
    {"have", "has", "had", "having", "'ve", "'d", "do", "does", "did", "done", "doing"}
    | {"can", "ca", "could", "may", "might", "must", "shall", "sha", "should"}
    | {"will", "wo", "'ll", "would", "ought"}
)

_MAX_DRAWS = 64  # each draw fails with probability <= 1/2, so this is never reached in practice


class NotApplicable(Exception):
    """The sentence gives no probe of this kind; ``reason`` is a stable summary code:
    ``no_phrase_of_length``, ``phrase_unshufflable``, ``unshufflable``, ``no_agent_patient``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Change:
    """A changed sentence and a JSON-ready record of what moved."""

    tokens: tuple[str, ...]
    detail: dict[str, Any]


def rng_for(seed: int, rule: str, key: str) -> random.Random:
    """A generator that depends only on (seed, rule, key), via sha256 (never ``hash()``, which
    is salted per process), so rebuilding a probe anywhere gives the same shuffles."""
    digest = hashlib.sha256(f"{seed}|{rule}|{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def shuffle_constituent(parsed: Parsed, length: int, rng: random.Random) -> Change:
    """Shuffle-x: permute the words of one allowed phrase spanning exactly ``length`` words.

    Spans carrying several labels count once (outermost label reported), so each distinct span
    is equally likely. A phrase whose words are all the same cannot change the sentence and is
    not a candidate.
    """
    spans: dict[tuple[int, int], str] = {}
    for span in phrases(parsed):
        if span.label in PHRASE_LABELS and span.end - span.start == length:
            spans.setdefault((span.start, span.end), span.label)
    if not spans:
        raise NotApplicable("no_phrase_of_length")
    tokens = parsed.tokens
    shufflable = [key for key in spans if len(set(tokens[key[0] : key[1]])) > 1]
    if not shufflable:
        raise NotApplicable("phrase_unshufflable")
    start, end = rng.choice(shufflable)
    words = tokens[start:end]
    order = _changing_permutation(words, rng)
    moved = tuple(words[i] for i in order)
    return Change(
        tokens=tokens[:start] + moved + tokens[end:],
        detail={
            "label": spans[(start, end)],
            "start": start,
            "end": end,
            "words": list(words),
            "order": order,
        },
    )


def shuffle_all(tokens: Sequence[str], rng: random.Random) -> Change:
    """Random: permute all tokens so that the word sequence changes."""
    words = tuple(tokens)
    if len(set(words)) < 2:
        raise NotApplicable("unshufflable")
    order = _changing_permutation(words, rng)
    return Change(tokens=tuple(words[i] for i in order), detail={"order": order})


def swap_roles(parsed: Parsed) -> Change:
    """Shuffle-SR (Chen et al. Algorithm 1) on the parse: swap the subject (agent) and object
    (patient) of the first ``S`` clause whose main verb is not an auxiliary and not passive."""
    tags = pos_tags(parsed)
    for clause in _clauses(constituents(parsed)):
        roles = _agent_verb_patient(clause, parsed.tokens, tags)
        if roles is not None:
            return _swap(parsed.tokens, tags, *roles)
    raise NotApplicable("no_agent_patient")


def _changing_permutation(words: Sequence[str], rng: random.Random) -> list[int]:
    """A permutation of offsets whose word sequence differs from ``words`` (rejection sampling;
    at least two distinct words make every draw succeed with probability >= 1/2)."""
    order = list(range(len(words)))
    for _ in range(_MAX_DRAWS):
        rng.shuffle(order)
        if any(words[i] != words[k] for k, i in enumerate(order)):
            return order
    # Unreachable in practice; a deterministic fallback keeps the function total.
    other = next(k for k in range(len(words)) if words[k] != words[0])
    order = list(range(len(words)))
    order[0], order[other] = other, 0
    return order


def _clauses(node: Constituent) -> list[Constituent]:
    found = [node] if node.label == "S" else []
    for child in node.children:
        found.extend(_clauses(child))
    return found


def _agent_verb_patient(
    clause: Constituent, tokens: Sequence[str], tags: Sequence[str]
) -> tuple[Constituent, int, Constituent] | None:
    """(subject NP, head verb index, object NP) of an active clause, else None."""
    labels = [child.label for child in clause.children]
    if "VP" not in labels:
        return None
    first_vp = labels.index("VP")
    subjects = [child for child in clause.children[:first_vp] if child.label == "NP"]
    if not subjects:
        return None
    vp = clause.children[first_vp]
    chain: list[str] = []  # auxiliaries passed on the way down, for the passive test
    while True:
        heads = [
            i
            for i, child in enumerate(vp.children)
            if child.is_preterminal and _is_verb_tag(tags[child.start])
        ]
        if not heads:
            inner = _first(vp.children, "VP", 0)
            if inner is None:
                return None
            vp = inner  # coordination: (VP (VP ...) (CC and) (VP ...))
            continue
        head = vp.children[heads[0]]
        word = tokens[head.start].lower()
        inner = _first(vp.children, "VP", heads[0] + 1)
        if tags[head.start] in ("MD", "TO") or word in AUXILIARIES:
            if inner is None:
                return None  # copula or possessive "has": the paper skips auxiliary verbs
            chain.append(word)
            vp = inner
            continue
        if word in _GET_FORMS and inner is not None:  # "gets pushed": get as passive auxiliary
            chain.append(word)
            vp = inner
            continue
        if tags[head.start] == "VBN" and any(w in _BE_FORMS or w in _GET_FORMS for w in chain):
            return None  # passive: the subject is the patient
        patient = _first(vp.children, "NP", heads[0] + 1)
        if patient is None:
            return None
        return subjects[-1], head.start, patient


def _swap(
    tokens: Sequence[str],
    tags: Sequence[str],
    agent: Constituent,
    verb_index: int,
    patient: Constituent,
) -> Change:
    agent_words = list(tokens[agent.start : agent.end])
    patient_words = list(tokens[patient.start : patient.end])
    mapped: list[str] = []
    new_patient_slot = _recase(agent_words, _SUBJECT_TO_OBJECT, mapped)
    new_agent_slot = _recase(patient_words, _OBJECT_TO_SUBJECT, mapped)
    before = list(tokens[: agent.start])
    between = list(tokens[agent.end : patient.start])
    after = list(tokens[patient.end :])
    new = before + new_agent_slot + between + new_patient_slot + after
    if agent.start == 0 and tokens[0][:1].isupper():
        new[0] = new[0][:1].upper() + new[0][1:]
        moved = len(new_agent_slot) + len(between)  # where the old first word now stands
        if new[moved] != "I" and tags[0] not in ("NNP", "NNPS"):
            new[moved] = new[moved][:1].lower() + new[moved][1:]
    return Change(
        tokens=tuple(new),
        detail={
            "verb": tokens[verb_index],
            "verb_index": verb_index,
            "agent": [agent.start, agent.end],
            "patient": [patient.start, patient.end],
            "agent_words": agent_words,
            "patient_words": patient_words,
            "case_mapped": mapped,
        },
    )


def _recase(words: list[str], mapping: dict[str, str], mapped: list[str]) -> list[str]:
    """Map a one-pronoun phrase into its new case, keeping its capitalisation style."""
    if len(words) != 1 or words[0].lower() not in mapping:
        return list(words)
    word = words[0]
    target = mapping[word.lower()]
    mapped.append(f"{word.lower()}->{target}")
    if target == "i":
        return ["I"]
    if word.isupper() and len(word) > 1:
        return [target.upper()]
    if word[:1].isupper() and word != "I":
        return [target.capitalize()]
    return [target]


def _is_verb_tag(tag: str) -> bool:
    return tag.startswith("VB") or tag in ("MD", "TO")


def _first(children: Sequence[Constituent], label: str, after: int) -> Constituent | None:
    return next((child for child in children[after:] if child.label == label), None)
