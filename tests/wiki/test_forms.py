"""The curator's edit form (wiki.forms) checks the same limits as the services."""

from __future__ import annotations

from wiki import services
from wiki.forms import EditForm


def _form(**kw):
    data = {"title": "T", "summary": "S", "original_text": "O", "tags": "", "reason": "edit"}
    data.update(kw)
    return EditForm(data=data)


def test_the_edit_form_accepts_what_the_services_accept():
    form = _form(title="x" * services.MAX_TITLE, tags=", ".join(f"tag{i}" for i in range(services.MAX_TAGS)))
    assert form.is_valid(), form.errors
    assert len(form.cleaned_data["title"]) == 300 and len(form.cleaned_data["tags"]) == 50


def test_the_edit_form_refuses_what_the_services_refuse():
    assert "title" in _form(title="x" * 301).errors
    assert "tags" in _form(tags=", ".join(f"tag{i}" for i in range(51))).errors
    assert "tags" in _form(tags="x" * 101).errors
