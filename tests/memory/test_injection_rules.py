"""The rules file (SPEC P4): every rule's examples match and its counter-examples don't; the loader refuses a
broken file; every detector the file declares is implemented and every implemented one is declared."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from memory.engine.injection import registry, ruleset
from memory.engine.injection.compiler import _ALL_RULES, _alternatives, _group_end, _tokens
from memory.engine.injection.ruleset import RULES_PATH, RULESET, RulesetError, parse
from memory.engine.injection.scan import SCAN_RULE_IDS, scan_rules

SPECS = (*RULESET.rules, *RULESET.detectors)


def test_the_file_follows_the_spec_families_and_weights():
    assert RULESET.weights == {
        "instruction_override": 40,
        "role_hijack": 35,
        "tool_abuse": 30,
        "data_exfiltration": 25,
        "system_prompt_extraction": 30,
        "termination_manipulation": 30,
        "encoding_bypass": 25,
        "zero_width": 20,
    }
    assert RULESET.blocks_alone == {"instruction_override", "role_hijack", "tool_abuse", "data_exfiltration"}
    assert (RULESET.block_at, RULESET.zero_width_limit) == (60, 3)
    assert re.fullmatch(r"p4-\d{4}\.\d+", RULESET.version)
    assert len(RULESET.rules) >= 70 and len(RULESET.detectors) >= 50


def test_every_rule_has_family_weight_language_and_examples():
    for spec in SPECS:
        assert spec.weight == RULESET.families[spec.family].weight, spec.id
        assert spec.lang and set(spec.lang) <= ruleset.LANGS, spec.id
        assert spec.examples and spec.counter_examples, spec.id
    assert {lang for s in SPECS for lang in s.lang} >= {"en", "zh"}  # English and Chinese phrasing


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_each_rule_matches_its_examples_and_not_its_counter_examples(spec):
    for text in spec.examples:
        assert spec.id in scan_rules(text).rule_ids, (spec.id, text)
    for text in spec.counter_examples:
        assert spec.id not in scan_rules(text).rule_ids, (spec.id, text)


def test_declared_detectors_are_exactly_the_implemented_ones():
    declared = {s.id for s in RULESET.detectors}
    assert declared == registry.registered_ids() | SCAN_RULE_IDS
    assert not declared & {s.id for s in RULESET.rules}


def test_every_phrase_rule_is_compiled_and_every_compiled_rule_is_in_the_file():
    assert {r.rule_id for r in _ALL_RULES} == {s.id for s in RULESET.rules}
    assert all(r.family == RULESET.spec(r.rule_id).family for r in _ALL_RULES)


def test_an_unknown_detector_id_is_refused_at_registration():
    with pytest.raises(RulesetError):
        registry.detector("io.lex.not_in_the_file", scope="view")


# --- the loader --------------------------------------------------------------------------------------------

GOOD = b"""
version = "p4-test.1"
format = 1
block_at = 60
zero_width_limit = 3
[families]
instruction_override = { weight = 40, blocks_alone = true }
[macros]
VERB = '''
    (?:ignore|
    disregard)'''
[[rule]]
id = "io.en.test"
family = "instruction_override"
weight = 40
lang = ["en"]
view = "text"
pattern = '''\\b{VERB} all '''
triggers = "ignore disregard"
examples = ["ignore all of it"]
counter_examples = ["ignore me"]
[[detector]]
id = "io.lex.test"
family = "instruction_override"
weight = 40
lang = ["en"]
examples = ["x"]
counter_examples = ["y"]
"""


def test_a_good_file_parses_and_patterns_join_their_lines_keeping_trailing_spaces():
    rs = parse(GOOD)
    (rule,) = rs.rules
    assert (
        rule.template == r"\b(?:ignore|disregard) all "
    )  # the break and indentation go, the last space stays
    assert rule.triggers == ("ignore", "disregard")
    assert rs.sha256 and rs.version == "p4-test.1"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            b'family = "instruction_override"\nweight = 40\nlang = ["en"]\nview',
            b'family = "nope"\nweight = 40\nlang = ["en"]\nview',
            "unknown family",
        ),
        (b'weight = 40\nlang = ["en"]\nview', b'weight = 35\nlang = ["en"]\nview', "is not its family's"),
        (b'lang = ["en"]\nview', b'lang = ["xx"]\nview', "lang must be"),
        (b'view = "text"', b'view = "html"', "view must be"),
        (b'examples = ["ignore all of it"]', b"examples = []", "must not be empty"),
        (b'counter_examples = ["ignore me"]', b"", "counter_examples"),
        (b"\\b{VERB} all ", b"\\b{NOUN} all ", "unknown macro"),
        (b'id = "io.lex.test"', b'id = "io.en.test"', "duplicate ids"),
        (b"format = 1", b"format = 2", "format"),
        (b"block_at = 60", b"block_at = 60\nextra = 1", "unknown top-level keys"),
        (b'triggers = "ignore disregard"', b'triggers = "ignore disregard"\nsevere = true', "unknown keys"),
        (b"[families]", b"[families", "not valid TOML"),
    ],
)
def test_a_broken_file_is_refused_with_the_reason(old, new, message):
    assert old in GOOD
    with pytest.raises(RulesetError, match=re.escape(message)):
        parse(GOOD.replace(old, new, 1))


def test_a_missing_file_is_refused(tmp_path: Path):
    with pytest.raises(RulesetError, match="cannot read"):
        ruleset.load(tmp_path / "rules.toml")


def test_the_shipped_file_is_valid_toml_with_one_entry_per_id():
    doc = tomllib.loads(RULES_PATH.read_text(encoding="utf-8"))
    ids = [e["id"] for e in doc["rule"] + doc["detector"]]
    assert len(ids) == len(set(ids)) == len(SPECS)


# --- the template tokenizer ---------------------------------------------------------------------------------


def test_one_tokenizer_splits_alternatives_and_finds_group_ends():
    template = r"a(?:b|c)|[|(]d|\(e|f(?<!x)"
    assert _alternatives(template) == ["a(?:b|c)", "[|(]d", r"\(e", "f(?<!x)"]
    assert _group_end("(?:a(b)|[)])x", 0) == 11
    assert _group_end("(?:a", 0) == -1
    depths = [d for _pos, _tok, d in _tokens("(?:a(b))")]
    assert depths == [0, 1, 1, 2, 2, 1]


def test_an_optional_group_of_whole_words_does_not_hide_the_start_words():
    """A group whose every option ends with a separator ("(?:alle |sämtliche )?") ends a word, so the alternative
    is anchored on its words and the words after it (not left to the windowed search)."""
    from memory.engine.injection.compiler import _leading_words

    assert _leading_words(r"\b(?:alle |samtliche )?(?:bisherigen|obigen) regeln") == {
        "alle",
        "samtliche",
        "bisherigen",
        "obigen",
    }
    # options without a trailing separator are still pieces of one word, expanded whole
    assert _leading_words(r"(?:in|un)(?:do|lock) it") == {"indo", "inlock", "undo", "unlock"}
    parts = [r for r in _ALL_RULES if r.rule_id == "io.de.ignore_prior_instructions"]
    assert len(parts) == 1 and parts[0].starts is not None  # one part: every alternative of it is anchored


def test_anchored_matching_finds_what_a_whole_text_search_finds_on_every_example():
    """Every rule's examples and counter-examples (in every language the rules read), alone and joined into one
    long text: the same rule ids with the trigger prefilter, anchored matching and clause windows switched off."""
    from tests.memory.injection_util import with_full_search

    texts = [t for s in SPECS for t in (*s.examples, *s.counter_examples)]
    texts.append(" \n".join(texts))
    fast = [scan_rules(t).rule_ids for t in texts]
    assert fast == with_full_search(lambda: [scan_rules(t).rule_ids for t in texts])


def test_the_de_obfuscation_vocabulary_keeps_to_the_english_and_chinese_rules():
    """Leetspeak and spaced-out tokens are decoded only into words the English/Chinese rules spell: a word only
    a rule in another language uses ("ignorez", "instrucciones") would make English text decode differently."""
    from memory.engine.injection.compiler import _RULE_WORDS

    def words(specs):
        return {w for s in specs for w in re.findall(r"(?<![\\?])[a-z]{3,}", s.template)}

    core = [s for s in RULESET.rules if set(s.lang) <= ruleset.CORE_LANGS]
    other = [s for s in RULESET.rules if not set(s.lang) <= ruleset.CORE_LANGS]
    foreign_only = words(other) - words(core)
    assert foreign_only and {"ignorez", "instrucciones"} <= foreign_only
    assert _RULE_WORDS == words(core) and not _RULE_WORDS & foreign_only
