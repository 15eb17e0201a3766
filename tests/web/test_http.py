"""web.http: one mapping from engine error codes to HTTP statuses, and refusals shown where they happened."""

from __future__ import annotations

import re
from pathlib import Path

from django import forms

from memory import engine
from web.http import ERROR_STATUS, error_status, refusal

ROOT = Path(__file__).resolve().parents[2]


class NameForm(forms.Form):
    name = forms.CharField()


def _codes_raised() -> set[str]:
    """Every code an engine error can carry: its classes' codes (the engine's, and the wiki services') and the
    codes given when one is raised (``code="…"``)."""
    import wiki.services  # noqa: F401  (its error classes)

    classes, todo = set(), [engine.EngineError]
    while todo:
        cls = todo.pop()
        classes.add(cls.code)
        todo += cls.__subclasses__()
    sources = [*(ROOT / "memory" / "engine").rglob("*.py"), ROOT / "wiki" / "services.py"]
    given = {m for p in sources for m in re.findall(r'code="([a-z_]+)"', p.read_text(encoding="utf-8"))}
    return classes | given


def test_every_mapped_code_is_one_an_engine_error_carries():
    assert set(ERROR_STATUS) <= _codes_raised()


def test_statuses_by_kind_of_refusal():
    assert error_status(engine.InvalidArgument("bad")) == 422
    assert error_status(engine.NotFound("gone")) == 404
    assert error_status(engine.EngineError("taken", code="already_decided")) == 409
    assert error_status(engine.EngineError("odd", code="something_else")) == 400


def test_refusal_puts_the_message_on_the_named_field_or_the_form():
    form = NameForm({"name": "x"})
    assert form.is_valid()
    status, message = refusal(engine.InvalidArgument("name is taken", field="name"), form)
    assert (status, message) == (422, "name is taken") and form.errors["name"] == ["name is taken"]
    other = NameForm({"name": "x"})
    other.is_valid()
    refusal(engine.EngineError("not now", code="rate_limited", field="token"), other)
    assert other.non_field_errors() == ["not now"]
    assert refusal(engine.EngineError("later", code="rate_limited")).status == 429
