"""``posharness build-probes senteval``: each task's construction rule on hand-checked
sentences, the readers, and the balanced splits (Conneau et al. 2018, §3).

The tiny corpora the end-to-end tests build from are made here too (``write_corpus``):
PTB trees of known depth over a small vocabulary, a few CoNLL-U sentences, and raw text
whose word frequencies put exactly 1,000 words at ranks 2,001-3,000 (WC's window).
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import nltk
import pytest

from posharness.tasks.senteval.building.balance import (
    Candidate,
    allocate,
    allocate_grouped,
    length_matched,
    rng_for,
    split_quotas,
)
from posharness.tasks.senteval.building.clauses import (
    clause_coordination,
    invert_clauses,
    main_clause_tense,
    object_number,
    subject_number,
)
from posharness.tasks.senteval.building.conllu import read_conllu
from posharness.tasks.senteval.building.corpus import CorpusCounts, Origin, Sentence
from posharness.tasks.senteval.building.somo import build_replacements, replacement_for
from posharness.tasks.senteval.building.text import (
    PLAIN,
    WIKIEXTRACTOR,
    WIKITEXT,
    read_chunk,
    split_sentences,
    text_layout,
    text_units,
    tokenize,
)
from posharness.tasks.senteval.building.trees import (
    read_tree,
    read_trees,
    top_constituents,
    tree_depth,
)

# -- tiny corpora ------------------------------------------------------------------------
NOUNS = ("dog", "cat", "bird", "horse", "farmer", "painter", "sailor", "doctor")
PAST = ("saw", "liked", "followed", "helped", "watched", "visited")
PRESENT = {"sees": "see", "likes": "like", "follows": "follow", "helps": "help"}
ADJECTIVES = ("big", "small", "old", "young")
PREPOSITIONS = ("near", "behind", "beside")


def noun_phrase(rng: random.Random, nesting: int, adjective: bool) -> tuple[str, list[str]]:
    """An object NP: ``nesting`` PPs deep, the innermost with an ADJP when ``adjective``.
    Each PP level adds two to the tree depth, the ADJP one."""
    noun = rng.choice(NOUNS)
    plural = rng.random() < 0.5
    head = f"({'NNS' if plural else 'NN'} {noun + 's' if plural else noun})"
    words = ["the"]
    inner = "(DT the) "
    if adjective and nesting == 0:
        adj = rng.choice(ADJECTIVES)
        inner += f"(ADJP (RB very) (JJ {adj})) "
        words += ["very", adj]
    words.append(noun + "s" if plural else noun)
    base = f"(NP {inner}{head})"
    if nesting == 0:
        return base, words
    preposition = rng.choice(PREPOSITIONS)
    below, below_words = noun_phrase(rng, nesting - 1, adjective)
    return f"(NP {base} (PP (IN {preposition}) {below}))", [*words, preposition, *below_words]


def clause(
    rng: random.Random, nesting: int, adjective: bool, capital: bool
) -> tuple[str, list[str]]:
    """``S -> NP VP``: "The dog saw the cat near ..."; past or present, singular or plural."""
    noun = rng.choice(NOUNS)
    plural = rng.random() < 0.5
    subject_word = noun + "s" if plural else noun
    determiner = "The" if capital else "the"
    subject = f"(NP (DT {determiner}) ({'NNS' if plural else 'NN'} {subject_word}))"
    if rng.random() < 0.5:
        verb, tag = rng.choice(PAST), "VBD"
    else:
        singular_form = rng.choice(sorted(PRESENT))
        verb, tag = (PRESENT[singular_form], "VBP") if plural else (singular_form, "VBZ")
    obj, obj_words = noun_phrase(rng, nesting, adjective)
    return f"(S {subject} (VP ({tag} {verb}) {obj}))", [determiner, subject_word, verb, *obj_words]


def ptb_trees(count: int, seed: int = 0) -> list[str]:
    """Bracketed trees: simple clauses of depth 5-12 and some ``S , and S .``."""
    rng = random.Random(seed)
    trees = []
    for number in range(count):
        nesting, adjective = rng.randrange(4), rng.random() < 0.5
        if number % 6 == 5:
            first, _ = clause(rng, rng.randrange(2), False, True)
            second, _ = clause(rng, rng.randrange(2), False, False)
            trees.append(f"(ROOT (S {first} (, ,) (CC and) {second} (. .)))")
        else:
            body, _ = clause(rng, nesting, adjective, True)
            trees.append(f"(ROOT {body[:-1]} (. .)))")
    return trees


CONLLU = """# sent_id = ud-1
# text = The farmers have sold the old horses .
1\tThe\tthe\tDET\tDT\tDefinite=Def\t2\tdet\t_\t_
2\tfarmers\tfarmer\tNOUN\tNNS\tNumber=Plur\t4\tnsubj\t_\t_
3\thave\thave\tAUX\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t4\taux\t_\t_
4\tsold\tsell\tVERB\tVBN\tTense=Past|VerbForm=Part\t0\troot\t_\t_
5\tthe\tthe\tDET\tDT\tDefinite=Def\t7\tdet\t_\t_
6\told\told\tADJ\tJJ\tDegree=Pos\t7\tamod\t_\t_
7\thorses\thorse\tNOUN\tNNS\tNumber=Plur\t4\tobj\t_\t_
8\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = ud-2
# text = The doctor was tired, but Mary helped the sailor.
1\tThe\tthe\tDET\tDT\tDefinite=Def\t2\tdet\t_\t_
2\tdoctor\tdoctor\tNOUN\tNN\tNumber=Sing\t4\tnsubj\t_\t_
3\twas\tbe\tAUX\tVBD\tMood=Ind|Tense=Past|VerbForm=Fin\t4\tcop\t_\t_
4\ttired\ttired\tADJ\tJJ\tDegree=Pos\t0\troot\t_\tSpaceAfter=No
5\t,\t,\tPUNCT\t,\t_\t8\tpunct\t_\t_
6\tbut\tbut\tCCONJ\tCC\t_\t8\tcc\t_\t_
7\tMary\tMary\tPROPN\tNNP\tNumber=Sing\t8\tnsubj\t_\t_
8\thelped\thelp\tVERB\tVBD\tMood=Ind|Tense=Past|VerbForm=Fin\t4\tconj\t_\t_
9\tthe\tthe\tDET\tDT\tDefinite=Def\t10\tdet\t_\t_
10\tsailor\tsailor\tNOUN\tNN\tNumber=Sing\t8\tobj\t_\tSpaceAfter=No
11\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = ud-3
# text = I don't like the painter.
1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tI\tI\tPRON\tPRP\tCase=Nom|Number=Sing|Person=1\t4\tnsubj\t_\t_
2\tdo\tdo\tAUX\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tlike\tlike\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\t_
5\tthe\tthe\tDET\tDT\tDefinite=Def\t6\tdet\t_\t_
6\tpainter\tpainter\tNOUN\tNN\tNumber=Sing\t4\tobj\t_\t_
7\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_
"""


def _pseudo_words(count: int, rng: random.Random, taken: set[str]) -> list[str]:
    letters = "bdfgklmnprstvz"
    vowels = "aeiou"
    words: list[str] = []
    while len(words) < count:
        word = "".join(rng.choice(letters) + rng.choice(vowels) for _ in range(3))
        if word not in taken:
            taken.add(word)
            words.append(word)
    return words


def wc_text(vocabulary: set[str], seed: int = 0) -> list[str]:
    """Lines of raw text in which 1,000 made-up words each occur in exactly four
    sentences, and 2,000 other words (``vocabulary``, the trees' words, plus fillers)
    each occur more often, so the 1,000 take frequency ranks 2,001-3,000."""
    rng = random.Random(seed)
    taken = set(vocabulary)
    common = sorted(vocabulary)
    common += _pseudo_words(2000 - len(common), rng, taken)
    targets = _pseudo_words(1000, rng, taken)
    lines = []
    slot = 0
    for round_ in range(4):
        for target in targets:
            fillers = [common[(slot + k * 401) % len(common)] for k in range(5)]
            slot += 1
            words = [*fillers[:3], target, *fillers[3:]]
            lines.append(" ".join([words[0].capitalize(), *words[1:]]) + f" number{round_} .")
    return lines


def tree_vocabulary(trees: list[str]) -> set[str]:
    return {
        word.lower()
        for tree in trees
        for word in nltk.Tree.fromstring(tree).leaves()
        if word.isalpha()
    } | {"number"}


def write_corpus(folder: Path, trees: int = 240, seed: int = 0) -> dict[str, Path]:
    """A PTB file, a CoNLL-U file and a raw-text file from which all ten tasks build."""
    folder.mkdir(parents=True, exist_ok=True)
    bracketed = ptb_trees(trees, seed)
    ptb = folder / "trees.mrg"
    ptb.write_text("\n".join(bracketed) + "\n", encoding="utf-8")
    conllu = folder / "tiny.conllu"
    conllu.write_text(CONLLU, encoding="utf-8")
    text = folder / "words.txt"
    text.write_text("\n".join(wc_text(tree_vocabulary(bracketed), seed)) + "\n", encoding="utf-8")
    return {"ptb": ptb, "conllu": conllu, "text": text}


def sentence_from_tree(bracketed: str) -> Sentence:
    tree = read_tree(bracketed)
    return Sentence(tree.words(), Origin(0, 1, 1), tags=tree.tags(), tree=tree)


def sentence_from_conllu(block: int) -> Sentence:
    ud = list(read_conllu(Path("tiny.conllu"), CONLLU))[block]
    tokens = tuple(w.form for w in ud.words)
    return Sentence(
        tokens, Origin(0, ud.line, 1), tags=tuple(w.xpos for w in ud.words), words=ud.words
    )


# -- trees -------------------------------------------------------------------------------
JUMPED = (
    "(ROOT (S (NP (PRP He)) (VP (VBD jumped) (SBAR (IN as) (S (NP (DT a) (JJ coarse) "
    "(NN whisper)) (VP (VBD broke) (NP (PRP$ his) (NN concentration)))))) (. .)))"
)


def test_tree_depth_counts_root_to_the_deepest_part_of_speech_node() -> None:
    # ROOT S VP SBAR S VP NP NN: 8, the official label of this sentence in tree_depth.txt
    assert tree_depth(read_tree(JUMPED)) == 8
    for bracketed in ptb_trees(40):
        assert tree_depth(read_tree(bracketed)) == nltk.Tree.fromstring(bracketed).height() - 1


def test_wsj_trees_lose_empty_elements_and_function_tags_and_gain_a_root() -> None:
    wsj = (
        "( (S (NP-SBJ-1 (NNP Sam)) (VP (VBD left) (S (NP-SBJ (-NONE- *-1)) "
        "(VP (TO to) (VP (VB eat))))) (. .)) )"
    )
    tree = read_tree(wsj)
    assert tree.label == "ROOT" and tree.words() == ("Sam", "left", "to", "eat", ".")
    assert top_constituents(tree) == "NP_VP_."
    # the empty subject is gone, so S -> VP is one level: ROOT S VP S VP VP VB
    assert tree_depth(tree) == 7
    bare = read_tree("(S (NP (NNP Sam)) (VP (VBD left)) (. .))")
    assert bare.label == "ROOT" and tree_depth(bare) == 4


def test_several_trees_in_one_file_and_bracket_escapes() -> None:
    text = (
        "(ROOT (S (NP (NNP A)) (VP (VBZ is) (NP (-LRB- -LRB-) (NN b) (-RRB- -RRB-)))))\n"
        "(ROOT (NP (NN c)))"
    )
    trees = list(read_trees(text))
    assert [t.words() for _, t in trees] == [("A", "is", "(", "b", ")"), ("c",)]
    assert trees[1][0] > trees[0][0]


@pytest.mark.parametrize("broken", ["(ROOT (S (NP (NN a))", "(ROOT (S (NN a) b))", "word (S)"])
def test_a_broken_bracketing_is_refused(broken: str) -> None:
    from posharness.tasks.senteval.building.trees import BracketError

    with pytest.raises(BracketError):
        read_tree(broken)


def test_top_constituents_are_the_children_of_the_top_clause() -> None:
    assert top_constituents(read_tree(JUMPED)) == "NP_VP_."
    fronted = (
        "(ROOT (S (PP (IN In) (NP (DT the) (NN morning))) (, ,) (NP (PRP we)) "
        "(VP (VBD left)) (. .)))"
    )
    assert top_constituents(read_tree(fronted)) == "PP_,_NP_VP_."
    assert top_constituents(read_tree("(ROOT (NP (DT A) (NN dog) (. .)))")) is None


# -- main clause facts -------------------------------------------------------------------
CHASING = (
    "(ROOT (S (NP (DT The) (NNS dogs)) (VP (VBZ is) (VP (VBG chasing) (NP (NP (DT the) "
    "(NN cat)) (PP (IN of) (NP (DT the) (NNS farmers)))))) (. .)))"
)


def test_tense_is_the_finite_verb_and_the_target_the_lexical_verb() -> None:
    found = main_clause_tense(sentence_from_tree(CHASING))
    assert (found.label, found.target, found.position) == ("PRES", "chasing", 3)
    found = main_clause_tense(sentence_from_tree(JUMPED))
    assert (found.label, found.target) == ("PAST", "jumped")
    modal = "(ROOT (S (NP (PRP I)) (VP (MD will) (VP (VB go))) (. .)))"
    assert main_clause_tense(sentence_from_tree(modal)) == "modal"


def test_subject_and_object_number_come_from_their_head_nouns() -> None:
    sentence = sentence_from_tree(CHASING)
    subject = subject_number(sentence)
    assert (subject.label, subject.target, subject.position) == ("NNS", "dogs", 1)
    obj = object_number(sentence)  # "the cat of the farmers": head is cat, not farmers
    assert (obj.label, obj.target, obj.position) == ("NN", "cat", 5)
    assert subject_number(sentence_from_tree(JUMPED)) == "head_not_noun"  # a pronoun
    copula = "(ROOT (S (NP (NN Tom)) (VP (VBZ is) (NP (DT a) (NN doctor))) (. .)))"
    assert object_number(sentence_from_tree(copula)) == "copula"


def test_ud_facts_follow_the_root_and_its_auxiliaries() -> None:
    have_sold = sentence_from_conllu(0)
    tense = main_clause_tense(have_sold)
    assert (tense.label, tense.target) == ("PRES", "sold")  # "have" is the finite verb
    assert subject_number(have_sold).label == "NNS"
    assert object_number(have_sold).target == "horses"
    copular = sentence_from_conllu(1)
    assert main_clause_tense(copular).label == "PAST"  # from the copula "was"
    assert object_number(copular) == "no_object"
    assert main_clause_tense(sentence_from_conllu(2)).label == "PRES"
    assert sentence_from_conllu(2).tokens[:3] == ("I", "do", "n't")  # syntactic words


def test_coordination_inversion_swaps_clauses_and_keeps_punctuation_and_capitals() -> None:
    tree = (
        "(ROOT (S (S (NP (PRP He)) (VP (VBD knew) (NP (PRP it)))) (, ,) (CC and) "
        "(S (NP (PRP he)) (VP (VBD deserved) (NP (DT no) (NN answer)))) (. .)))"
    )
    sentence = sentence_from_tree(tree)
    found = clause_coordination(sentence)
    assert (found.first, found.connector, found.second, found.tail) == (
        (0, 3),
        (3, 5),
        (5, 9),
        (9, 10),
    )
    inverted = invert_clauses(sentence.tokens, found)
    assert " ".join(inverted) == "He deserved no answer , and he knew it ."
    ud = sentence_from_conllu(1)
    inverted = invert_clauses(ud.tokens, clause_coordination(ud))
    assert " ".join(inverted) == "Mary helped the sailor , but the doctor was tired ."
    assert clause_coordination(sentence_from_tree(JUMPED)) == "not_s_cc_s"


# -- corpus-level changes ----------------------------------------------------------------
def test_somo_replacement_keeps_the_tag_and_both_new_bigrams_are_attested() -> None:
    counts = CorpusCounts()
    sentences = [sentence_from_tree(t) for t in ptb_trees(200, seed=3)]
    for sentence in sentences:
        counts.add(sentence.tokens, sentence.tags)
    table = build_replacements(counts)
    changed = 0
    for sentence in sentences:
        change = replacement_for(sentence, table, seed=0)
        if isinstance(change, str):
            continue
        changed += 1
        i = change["position"]
        left, right = sentence.tokens[i - 1].lower(), sentence.tokens[i + 1].lower()
        new = change["replacement"]
        assert new != change["word"] == sentence.tokens[i]
        assert table.lexicon[new] == sentence.tags[i] == change["tag"]
        assert counts.bigrams[(left, new)] > 0 and counts.bigrams[(new, right)] > 0
        ratio = counts.unigrams[new] / counts.unigrams[change["word"]]
        assert 0.5 <= ratio <= 2.0
    assert changed > 50


def test_bshift_and_somo_changes_are_seeded_per_sentence() -> None:
    sentence = sentence_from_tree(CHASING)
    first = rng_for(0, "bshift", sentence.origin.key).random()
    assert first == rng_for(0, "bshift", sentence.origin.key).random()
    assert first != rng_for(1, "bshift", sentence.origin.key).random()


# -- raw text ----------------------------------------------------------------------------
WIKITEXT_SAMPLE = [
    " ",
    " = Lobster = ",
    " ",
    " The state @-@ of @-@ the @-@ art boat cost 1 @,@ 000 dollars . It did n't sink , and it "
    'was 2 @.@ 5 metres long . He said " do it . " Then he went home with the <unk> crew . ',
    " = = History = = ",
    " They don 't know . ",
]


def test_wikitext_is_rejoined_split_on_its_tokens_and_cleaned() -> None:
    assert text_layout([line for line in WIKITEXT_SAMPLE if line.strip()]) == WIKITEXT
    skipped: Counter[str] = Counter()
    units = text_units(WIKITEXT, WIKITEXT_SAMPLE, skipped)
    assert skipped["heading_line"] == 2 and [n for n, _ in units] == [4, 6]
    chunk = read_chunk(WIKITEXT, units)
    sentences = [" ".join(tokens) for _, _, tokens in chunk.sentences]
    assert sentences[0] == "The state-of-the-art boat cost 1,000 dollars ."
    assert "It did n't sink , and it was 2.5 metres long ." in sentences
    assert 'He said " do it . "' in sentences
    assert chunk.excluded["unknown_word"] == 1  # the <unk> sentence
    assert sentences[-1] == "They do n't know ."  # WikiText's "don 't" in PTB form


def test_wikiextractor_titles_tags_and_headings_are_skipped() -> None:
    lines = [
        '<doc id="1" url="?curid=1" title="Jane Roe">',
        "Jane Roe",
        "",
        "Jane Roe (born 1990) is a painter from Ohio. She lives in Dayton with two cats.",
        "Early life.",
        "Roe studied art in Chicago, where she met Dr. Smith in 2010.",
        "</doc>",
    ]
    assert text_layout(lines) == WIKIEXTRACTOR
    skipped: Counter[str] = Counter()
    units = text_units(WIKIEXTRACTOR, lines, skipped)
    assert [n for n, _ in units] == [4, 6]
    assert skipped == Counter({"markup_line": 2, "title_line": 1, "heading_line": 1})
    assert text_layout(["Just a line of text."]) == PLAIN


def test_sentences_split_at_safe_boundaries_and_by_pysbd_elsewhere() -> None:
    assert split_sentences("The U.S. Army left in May. Then it rained.") == [
        "The U.S. Army left in May.",
        "Then it rained.",
    ]
    assert split_sentences("Dr. Smith met Mr. Jones. They talked.") == [
        "Dr. Smith met Mr. Jones.",
        "They talked.",
    ]
    assert split_sentences("It was late (around midnight). Everyone slept!") == [
        "It was late (around midnight).",
        "Everyone slept!",
    ]


def test_tokenizer_gives_nltk_treebank_tokens() -> None:
    from nltk.tokenize import TreebankWordTokenizer

    reference = TreebankWordTokenizer().tokenize
    for text in (
        "She said, \"I can't go -- it's late...\" (really).",
        "They'll pay $3.88 for 2,000 items; won't they?",
        "The 'quoted' word and O'Neil's [book] {x} <y>.",
    ):
        assert tokenize(text) == reference(text)
    assert tokenize("I can't.") == ["I", "ca", "n't", "."]


# -- balance -----------------------------------------------------------------------------
def _candidates(counts: dict[str, int], group_size: int = 0) -> list[Candidate]:
    made = []
    for label, count in counts.items():
        for i in range(count):
            group = f"{label}-{i // group_size}" if group_size else ""
            made.append(Candidate(label, sentence=i, tokens=("w",) * (5 + i % 7), group=group))
    return made


def test_every_split_is_balanced_and_shrinks_in_the_requested_ratio() -> None:
    requested = {"tr": 100, "va": 10, "te": 10}
    allocation = allocate(_candidates({"a": 1000, "b": 36}), ["a", "b"], requested, rng_for(0, "t"))
    assert allocation.per_class == {
        "tr": {"a": 30, "b": 30},
        "va": {"a": 3, "b": 3},
        "te": {"a": 3, "b": 3},
    }
    assert allocation.unused == 1036 - 72
    assert split_quotas({"tr": 100, "va": 10, "te": 10}, 2, 7) == {"tr": 5, "va": 1, "te": 1}


def test_a_class_without_candidates_is_left_out_not_the_task() -> None:
    allocation = allocate(
        _candidates({"a": 20, "b": 20}),
        ["a", "b", "c"],
        {"tr": 8, "va": 4, "te": 4},
        rng_for(0, "t"),
    )
    assert allocation.missing == ("c",)
    assert allocation.sizes == {"tr": 8, "va": 4, "te": 4}


def test_grouped_allocation_keeps_each_target_in_one_split() -> None:
    candidates = _candidates({"NN": 300, "NNS": 200}, group_size=7)
    allocation = allocate_grouped(
        candidates, ["NN", "NNS"], {"tr": 200, "va": 40, "te": 40}, rng_for(0, "g")
    )
    seen: dict[str, str] = {}
    for split, members in allocation.examples.items():
        for candidate in members:
            assert seen.setdefault(candidate.group, split) == split
        counts = Counter(c.label for c in members)
        assert counts["NN"] == counts["NNS"] > 0
    sizes = allocation.sizes
    assert sizes["va"] == sizes["te"] and sizes["tr"] >= 4 * sizes["va"]


def test_length_matching_gives_every_depth_the_same_length_histogram_when_it_can() -> None:
    rng = random.Random(0)
    by_class: dict[str, list[Candidate]] = {"5": [], "9": []}
    for i in range(400):  # depth 5 mostly short, depth 9 mostly long, overlap in 10-14
        by_class["5"].append(Candidate("5", i, ("w",) * rng.randint(5, 14)))
        by_class["9"].append(Candidate("9", i, ("w",) * rng.randint(10, 28)))
    selected, figures = length_matched(by_class, 100, lambda c: len(c.tokens), rng_for(0, "d"))
    histograms = {
        label: Counter(len(c.tokens) for c in chosen) for label, chosen in selected.items()
    }
    assert len(selected["5"]) == len(selected["9"]) == 100
    assert histograms["5"] == histograms["9"]
    assert figures["built"] == 0.5 < figures["balanced_random"]
