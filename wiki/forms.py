"""Forms of the wiki curation pages (SPEC D5, W5): the browser's filters (GET, kept in the URL) and the
curator's edit / promote / remove forms (POST). The services check everything again; these only give the
person a clear message next to the field before a round trip to the engine."""

from __future__ import annotations

from typing import Any

from django import forms

from . import services

MAX_QUERY_CHARS = 500
MAX_REASON_CHARS = services.MAX_REASON
MAX_TITLE_CHARS = services.MAX_TITLE
MAX_SUMMARY_CHARS = services.MAX_SUMMARY_BYTES  # the services count bytes (8 KB)
# SPEC W2: original text ≤ 64 KB (the services count bytes; this counts characters)
MAX_TEXT_CHARS = services.MAX_TEXT_BYTES
MAX_TAGS = services.MAX_TAGS
MAX_TAG_CHARS = services.MAX_TAG_CHARS

DOC_TYPES = ("charter", "sop", "spec", "policy", "reference")
DOC_TYPE_LABELS = {
    "charter": "Charter",
    "sop": "SOP",
    "spec": "Spec",
    "policy": "Policy",
    "reference": "Reference",
}
NAMESPACE_CHOICES = [("", "Auto and curated"), ("auto", "auto/ (agent-written)"), ("curated", "curated/")]
STATUS_CHOICES = [("live", "Live pages"), ("removed", "Removed pages"), ("all", "All pages")]
AGE_CHOICES = [
    ("", "Any age"),
    ("1", "Updated today (24 h)"),
    ("7", "Updated in the last 7 days"),
    ("30", "Updated in the last 30 days"),
    ("90", "Updated in the last 90 days"),
]


class WikiFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=MAX_QUERY_CHARS, strip=True, label="Search")
    namespace = forms.ChoiceField(required=False, choices=NAMESPACE_CHOICES, label="Namespace")
    doc_type = forms.ChoiceField(
        required=False,
        choices=[("", "Any type")] + [(t, DOC_TYPE_LABELS[t]) for t in DOC_TYPES],
        label="Doc type",
    )
    age = forms.ChoiceField(required=False, choices=AGE_CHOICES, label="Age")
    status = forms.ChoiceField(required=False, choices=STATUS_CHOICES, label="Pages")

    def filters(self) -> dict[str, Any]:
        """Cleaned filters; invalid fields fall back to their defaults (the errors are shown beside them)."""
        data = self.cleaned_data if self.is_bound else {}
        age = data.get("age") or ""
        return {
            "q": data.get("q") or "",
            "namespace": data.get("namespace") or "",
            "doc_type": data.get("doc_type") or "",
            "age": age,
            "age_days": int(age) if age else None,
            "status": data.get("status") or "live",
        }


class ReasonField(forms.CharField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", MAX_REASON_CHARS)
        kwargs.setdefault("strip", True)
        kwargs.setdefault(
            "error_messages", {"required": "A reason is required: say why, it goes into the audit log."}
        )
        super().__init__(**kwargs)


class ReasonForm(forms.Form):
    """Promote or remove a page: a reason is required (SPEC W5, UX Wiki)."""

    reason = ReasonField(label="Reason", widget=forms.TextInput())


def parse_tags(text: str) -> list[str]:
    """``"sop, billing,  refunds"`` → ``["sop", "billing", "refunds"]`` (order kept, duplicates dropped)."""
    seen: list[str] = []
    for part in text.replace("\n", ",").split(","):
        tag = part.strip()
        if tag and tag not in seen:
            seen.append(tag)
    return seen


class EditForm(forms.Form):
    """A curator's revision of a page (edit before promote). Every field starts at the latest revision."""

    title = forms.CharField(max_length=MAX_TITLE_CHARS, strip=True, label="Title")
    summary = forms.CharField(
        max_length=MAX_SUMMARY_CHARS, strip=True, label="Summary", widget=forms.Textarea
    )
    original_text = forms.CharField(
        max_length=MAX_TEXT_CHARS,
        strip=False,
        label="Original text",
        widget=forms.Textarea,
    )
    tags = forms.CharField(
        required=False,
        max_length=MAX_TAGS * (MAX_TAG_CHARS + 2),
        strip=True,
        label="Tags (comma separated)",
    )
    reason = ReasonField(label="Why this edit?", widget=forms.TextInput())

    def clean_tags(self) -> list[str]:
        tags = parse_tags(self.cleaned_data.get("tags") or "")
        if len(tags) > MAX_TAGS:
            raise forms.ValidationError(f"At most {MAX_TAGS} tags.")
        if any(len(tag) > MAX_TAG_CHARS for tag in tags):
            raise forms.ValidationError(f"Each tag has at most {MAX_TAG_CHARS} characters.")
        return tags


class PreviewForm(forms.Form):
    """The editor's live preview (issue 19 item 15): the draft as it would render, and what saving would change
    against the latest revision. Nothing is saved, so nothing is required; the limits are the edit's."""

    title = forms.CharField(required=False, max_length=MAX_TITLE_CHARS, strip=True)
    summary = forms.CharField(required=False, max_length=MAX_SUMMARY_CHARS, strip=True)
    original_text = forms.CharField(required=False, max_length=MAX_TEXT_CHARS, strip=False)
    tags = forms.CharField(required=False, max_length=MAX_TAGS * (MAX_TAG_CHARS + 2), strip=True)

    def clean_tags(self) -> list[str]:
        return parse_tags(self.cleaned_data.get("tags") or "")[:MAX_TAGS]

    def clean_original_text(self) -> str:
        return (self.cleaned_data.get("original_text") or "").replace("\r\n", "\n").strip("\n")

    def clean_summary(self) -> str:
        return (self.cleaned_data.get("summary") or "").replace("\r\n", "\n").strip("\n")
