"""SPEC B3: the predicate registry: the shipped file, normalised names and synonyms, value-domain checks,
validation of malformed files, and a deployment's override through memdesk.toml."""

from __future__ import annotations

import logging
import tomllib
from datetime import date
from pathlib import Path

import pytest

from memory import config
from memory.dream import registry as reg
from memory.dream.registry import (
    RegistryError,
    active_registry,
    default_registry,
    get_registry,
    load_registry,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "memdesk.toml"
    monkeypatch.setenv("MEMDESK_CONFIG", str(path))
    config._warned.clear()
    reg._reported.clear()

    def write(text: str) -> Path:
        path.write_text(text)
        return path

    return write


def write(tmp_path: Path, text: str, name: str = "predicates.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- the shipped registry --------------------------------------------------------------------------------


def test_the_shipped_registry_loads_and_holds_the_everyday_predicates():
    r = default_registry()
    for name in (
        "lives_in",
        "works_at",
        "deploy_target",
        "married_to",
        "manager_of",
        "reports_to",
        "part_of",
        "email",
        "birthday",
        "likes",
        "speaks",
        "has_child",
        "uses_tool",
        "located_in",
        "role",
        "phone",
        "website",
        "timezone",
    ):
        assert r.spec(name) is not None, name
    assert len(r) >= 30


def test_the_registry_file_ships_as_package_data():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "predicates.toml" in pyproject["tool"]["setuptools"]["package-data"]["memory"]
    assert reg.DEFAULT_PATH == ROOT / "memory" / "predicates.toml"


@pytest.mark.parametrize(
    ("predicate", "cardinality"),
    [
        ("lives_in", "single"),
        ("works_at", "single"),
        ("deploy_target", "single"),
        ("married_to", "single"),
        ("likes", "multi"),
        ("speaks", "multi"),
        ("has_child", "multi"),
        ("uses_tool", "multi"),
        ("never_heard_of", "single"),
    ],
)
def test_cardinality(predicate, cardinality):
    assert default_registry().cardinality(predicate) == cardinality


def test_names_compare_normalised_and_synonyms_map_to_the_canonical_name():
    r = default_registry()
    for spelling in (
        "lives_in",
        "  Lives In ",
        "LIVES-IN",
        "lives - in",
        "resides_in",
        "Resides In",
        "based-in",
    ):
        assert r.canonical(spelling) == "lives_in", spelling
    assert r.canonical("Employer") == "works_at"
    assert r.canonical("Favourite Colour") == "favourite_colour"  # unknown: itself, normalised
    assert r.synonyms("works for", "employed-by")
    assert not r.synonyms("works_at", "lives_in")
    assert "Resides In" in r and "favourite colour" not in r


def test_value_type_and_acyclic():
    r = default_registry()
    assert (r.value_type("lives_in"), r.value_type("works_at"), r.value_type("married_to")) == (
        "place",
        "organisation",
        "person",
    )
    assert (
        r.value_type("birthday"),
        r.value_type("age"),
        r.value_type("website"),
        r.value_type("email"),
    ) == (
        "date",
        "integer",
        "url",
        "email",
    )
    assert r.value_type("environment") == "enum" and r.value_type("unknown_thing") == "text"
    assert r.is_acyclic("reports_to") and r.is_acyclic("part_of") and r.is_acyclic("manager_of")
    assert not r.is_acyclic("likes") and not r.is_acyclic("unknown_thing")


# --- value domains -----------------------------------------------------------------------------------------

TODAY = date(2026, 3, 1)


@pytest.mark.parametrize(
    ("predicate", "value", "ok"),
    [
        ("birthday", "1990-04-12", True),
        ("birthday", "1990-04", True),
        ("dob", "1990", True),
        ("birthday", "2026-03-01", True),
        ("birthday", "2026-03-02", False),  # in the future
        ("birthday", "2031", False),
        ("birthday", "April 12th", False),
        ("birthday", "1990-13-01", False),
        ("started_on", "2027-01-01", True),  # not_future only where declared
        ("age", "42", True),
        ("age", "150", True),
        ("age", "151", False),
        ("age", "-1", False),
        ("age", "forty", False),
        ("team_size", "1,200", True),
        ("email", "ana@example.com", True),
        ("e-mail", "Ana.Lopez+work@sub.example.co", True),
        ("email", "ana@example", False),
        ("email", "ana at example.com", False),
        ("email", "@example.com", False),
        ("environment", "Staging", True),
        ("environment", "qa", False),
        ("priority", "critical", True),
        ("website", "https://acme.example/about", True),
        ("homepage", "acme.example", True),
        ("website", "ftp://acme.example", False),
        ("website", "not a url", False),
        ("timezone", "Europe/Berlin", True),
        ("tz", "UTC+8", True),
        ("timezone", "somewhere nice", False),
        ("phone", "+49 30 1234567", True),
        ("phone", "call me maybe", False),
        ("lives_in", "Berlin", True),
        ("lives_in", "   ", False),
        ("unknown_thing", "anything at all", True),
    ],
)
def test_check_value(predicate, value, ok):
    result = default_registry().check_value(predicate, value, today=TODAY)
    assert result.ok is ok, result.message
    assert bool(result) is ok
    assert (result.message == "") is ok


def test_birthday_future_check_uses_the_clock():
    import time_machine

    with time_machine.travel("2030-06-01T00:00:00Z", tick=False):
        assert default_registry().check_value("birthday", "2029-12-31").ok
    with time_machine.travel("2020-06-01T00:00:00Z", tick=False):
        assert not default_registry().check_value("birthday", "2029-12-31").ok


def test_check_value_rejects_non_text():
    assert not default_registry().check_value("age", None).ok
    assert not default_registry().check_value("age", 42).ok


# --- malformed files ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[predicates.x\ntype =", "not valid TOML"),
        ("version = 1\n", "[predicates.<name>] table is required"),
        ("version = 2\n[predicates.a]\ntype = 'text'\n", "version: 2 is not supported"),
        ("colour = 'red'\n[predicates.a]\ntype = 'text'\n", "colour: unknown top-level key"),
        ("[predicates.a]\ntype = 'colour'\n", "predicates.a.type: 'colour' is not one of"),
        ("[predicates.a]\ncardinality = 'single'\n", "predicates.a.type: None is not one of"),
        ("[predicates.a]\ntype = 'text'\ncardinality = 'many'\n", "predicates.a.cardinality: 'many'"),
        ("[predicates.a]\ntype = 'text'\nacyclic = 'yes'\n", "predicates.a.acyclic: must be true or false"),
        ("[predicates.a]\ntype = 'text'\nsynonyms = 'b'\n", "predicates.a.synonyms: must be a list"),
        ("[predicates.a]\ntype = 'integer'\nmin = 5\nmax = 1\n", "min 5 is above max 1"),
        ("[predicates.a]\ntype = 'integer'\nmin = 1.5\n", "predicates.a.min: must be an integer"),
        ("[predicates.a]\ntype = 'text'\nmin = 1\n", "predicates.a.min: only a integer predicate"),
        ("[predicates.a]\ntype = 'enum'\n", "predicates.a.values: an enum needs"),
        ("[predicates.a]\ntype = 'enum'\nvalues = []\n", "predicates.a.values: an enum needs"),
        ("[predicates.a]\ntype = 'text'\npattern = '(['\n", "predicates.a.pattern: not a regular expression"),
        ("[predicates.a]\ntype = 'text'\ncolour = 1\n", "predicates.a.colour: unknown key"),
        ("[predicates.a]\ntype = 'text'\n[predicates.A]\ntype = 'text'\n", "'a' is defined twice"),
        (
            "[predicates.a]\ntype = 'text'\nsynonyms = ['b']\n[predicates.b]\ntype = 'text'\n",
            "predicates.a.synonyms: 'b' is already a predicate",
        ),
        (
            "[predicates.a]\ntype = 'text'\nsynonyms = ['c']\n[predicates.b]\ntype = 'text'\nsynonyms = ['C']\n",
            "'c' is already a synonym of 'a'",
        ),
        ("predicates = 3\n", "[predicates.<name>] table is required"),
        ("[predicates]\na = 3\n", "predicates.a: must be a table"),
    ],
)
def test_a_malformed_file_raises_a_clear_registry_error(tmp_path, text, fragment):
    path = write(tmp_path, text)
    with pytest.raises(RegistryError) as err:
        load_registry(path)
    assert str(path) in str(err.value)
    assert fragment in str(err.value)
    assert err.value.code == "invalid_registry"


def test_a_missing_file_is_a_registry_error(tmp_path):
    with pytest.raises(RegistryError, match="no such file"):
        load_registry(tmp_path / "nope.toml")


# --- per-deployment override through memdesk.toml ----------------------------------------------------------


def test_without_a_registry_section_the_shipped_registry_is_in_force(toml):
    toml("[knowledge_guard]\nenabled = true\n")
    load = active_registry()
    assert load.registry is default_registry() and load.error == ""


def test_an_override_extends_and_replaces_predicates(toml, tmp_path):
    write(
        tmp_path,
        "[predicates.likes]\ntype = 'text'\ncardinality = 'single'\n"  # replaces the shipped (multi) one
        "[predicates.on_call_for]\ntype = 'text'\ncardinality = 'multi'\nsynonyms = ['pager_for']\n"
        "[predicates.home_base]\ntype = 'place'\nsynonyms = ['based_in']\n",  # takes a shipped synonym
        name="site.toml",
    )
    toml('[registry]\npath = "site.toml"\n')  # relative to the config file
    load = active_registry()
    assert load.error == "" and load.override == str(tmp_path / "site.toml")
    r = get_registry()
    assert r.cardinality("likes") == "single"
    assert r.canonical("Pager For") == "on_call_for" and r.cardinality("pager_for") == "multi"
    assert r.canonical("based_in") == "home_base"
    assert r.canonical("resides_in") == "lives_in"  # the rest of the shipped registry stays
    assert r.cardinality("speaks") == "multi"


def test_a_malformed_override_falls_back_to_the_shipped_registry_and_reports_it(toml, tmp_path, caplog):
    write(tmp_path, "[predicates.likes]\ntype = 'feeling'\n", name="site.toml")
    toml('[registry]\npath = "site.toml"\n')
    with caplog.at_level(logging.WARNING, logger="memdesk.registry"):
        first = active_registry()
        second = active_registry()
    assert first.registry is default_registry()
    assert "predicates.likes.type: 'feeling'" in first.error and "site.toml" in first.error
    assert second.error == first.error
    assert len([r for r in caplog.records if r.name == "memdesk.registry"]) == 1
    assert get_registry().cardinality("likes") == "multi"


def test_an_override_may_not_turn_a_shipped_predicate_into_a_synonym(toml, tmp_path):
    write(tmp_path, "[predicates.employment]\ntype = 'text'\nsynonyms = ['works_at']\n", name="site.toml")
    toml('[registry]\npath = "site.toml"\n')
    assert "'works_at' is a shipped predicate" in active_registry().error


def test_a_missing_override_file_is_reported(toml):
    toml('[registry]\npath = "nowhere.toml"\n')
    load = active_registry()
    assert "no such file" in load.error and load.registry is default_registry()


def test_a_malformed_registry_section_is_ignored_with_a_warning(toml, caplog):
    toml("[registry]\npath = 3\n")
    with caplog.at_level(logging.WARNING, logger="memdesk.config"):
        assert active_registry().registry is default_registry()
    assert "[registry] path" in caplog.text


def test_the_override_is_reread_when_it_changes(toml, tmp_path):
    import os

    site = write(tmp_path, "[predicates.likes]\ntype = 'text'\ncardinality = 'single'\n", name="site.toml")
    toml('[registry]\npath = "site.toml"\n')
    assert get_registry().cardinality("likes") == "single"
    site.write_text("[predicates.likes]\ntype = 'text'\ncardinality = 'multi'\n")
    stat = site.stat()
    os.utime(site, (stat.st_atime, stat.st_mtime + 10))
    assert get_registry().cardinality("likes") == "multi"
