"""Parsing of query strings: every filter lives in the URL, so every filter is a GET form."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django import forms

from memory import engine
from memory.engine import SCOPES
from memory.models import CATEGORIES, LAYERS

MAX_QUERY_CHARS = 500


class MemoryFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=MAX_QUERY_CHARS, strip=True, label="Search")
    layer = forms.ChoiceField(
        required=False, choices=[("", "Any layer")] + [(x, x) for x in LAYERS], label="Layer"
    )
    origin = forms.CharField(required=False, max_length=256, label="Origin")
    origin_class = forms.CharField(required=False, max_length=64, label="Origin class")
    status = forms.ChoiceField(
        required=False,
        choices=[
            ("current", "Current only"),
            ("all", "All rows (history)"),
            ("tainted", "Tainted: derived from a purged source"),
        ],
        label="Rows",
    )

    def clean_status(self) -> str:
        return self.cleaned_data.get("status") or "current"

    def filters(self) -> dict[str, str]:
        """Cleaned filters; invalid fields fall back to their defaults (the errors are shown beside them)."""
        data = self.cleaned_data if self.is_bound else {}
        return {
            "q": data.get("q") or "",
            "layer": data.get("layer") or "",
            "origin": data.get("origin") or "",
            "origin_class": data.get("origin_class") or "",
            "status": data.get("status") or "current",
        }


# what the ISO time inputs accept (the browser checks it; the server parses again)
ISO_PATTERN = r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?\s*(Z|z|[+\-]\d{2}:?\d{2})?"


class UTCDateTimeField(forms.Field):
    """An ISO 8601 time typed as text (issue 19 item 10: no 12-hour, locale-formatted picker), read as UTC when
    it has no offset; an explicit offset (``+02:00``) or ``Z`` is honoured. A date alone is its midnight."""

    widget = forms.DateTimeInput(
        attrs={"placeholder": "2024-05-01T12:00:00Z", "pattern": ISO_PATTERN, "spellcheck": "false"},
        format="%Y-%m-%dT%H:%M:%SZ",
    )
    default_error_messages = {"invalid": "Enter an ISO 8601 time in UTC, like 2024-05-01T12:00:00Z."}

    def to_python(self, value: Any) -> datetime | None:
        if value in self.empty_values:
            return None
        if isinstance(value, datetime):
            parsed = value
        else:
            text = str(value).strip()
            if text[-1:] in ("z", "Z"):
                text = text[:-1] + "+00:00"
            try:
                parsed = datetime.fromisoformat(text)
            except ValueError:
                raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        try:  # the engine's bounds: a time near the calendar's ends is a form error, never a 500
            return engine.parse_time(parsed, field=self.label or "time")
        except engine.EngineError:
            raise forms.ValidationError(
                "Enter a date and time between the years 1 and 9999 (UTC).", code="invalid"
            ) from None


class KeyPickerForm(forms.Form):
    """The timeline's key picker (issue 19 item 7): one box searched over subject and predicate; never required.

    A half-given key (``?subject=Jordan``) is a search, not an error."""

    q = forms.CharField(required=False, max_length=200, strip=True, label="Find a key")

    def query(self) -> str:
        if not self.is_valid():
            return ""
        return self.cleaned_data["q"]


class TimelineForm(forms.Form):
    subject = forms.CharField(max_length=512, strip=True)
    predicate = forms.CharField(max_length=512, strip=True)
    at = UTCDateTimeField(required=False, label="World time (UTC)")
    as_of = UTCDateTimeField(required=False, label="As believed on (UTC)")


# --- tokens (SPEC A2, D8) ---------------------------------------------------------------------------------


class TokenCreateForm(forms.Form):
    """A POST form; the engine validates again (and is the one that decides)."""

    name = forms.CharField(
        max_length=120,
        strip=True,
        label="Name",
        help_text="What uses it, e.g. “support-bot production”.",
    )
    scopes = forms.MultipleChoiceField(
        choices=[(s, s) for s in SCOPES],
        widget=forms.CheckboxSelectMultiple,
        label="Scopes",
        error_messages={"required": "Pick at least one scope."},
    )
    external = forms.BooleanField(
        required=False,
        label="External",
        help_text="For callers outside your control: their writes get the mcp_external origin (trust 0.3).",
    )
    expires_at = UTCDateTimeField(required=False, label="Expires (UTC, optional)")


# --- mistake notebook (SPEC X) ----------------------------------------------------------------------------

RESOLVED_CHOICES = [("all", "Open and resolved"), ("open", "Open"), ("resolved", "Resolved")]
MAX_PREVIEW_CHARS = 2000


class MistakeFilterForm(forms.Form):
    category = forms.ChoiceField(
        required=False, choices=[("", "Any category")] + [(c, c) for c in CATEGORIES], label="Category"
    )
    resolved = forms.ChoiceField(required=False, choices=RESOLVED_CHOICES, label="State")

    def filters(self) -> dict[str, str]:
        """Cleaned filters; invalid values fall back to the defaults."""
        data = self.cleaned_data if self.is_bound else {}
        return {"category": data.get("category") or "", "resolved": data.get("resolved") or "all"}


class ReflexionPreviewForm(forms.Form):
    message = forms.CharField(required=False, max_length=MAX_PREVIEW_CHARS, strip=True, label="Message")


# --- audit log --------------------------------------------------------------------------------------------


class AuditFilterForm(forms.Form):
    action = forms.CharField(required=False, max_length=64, label="Action")
    actor = forms.CharField(required=False, max_length=256, strip=True, label="Actor")
    since = forms.DateField(
        required=False, label="From (UTC)", widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(required=False, label="To (UTC)", widget=forms.DateInput(attrs={"type": "date"}))
    q = forms.CharField(required=False, max_length=MAX_QUERY_CHARS, strip=True, label="Subject or reason")
    batch = forms.IntegerField(required=False, min_value=1, label="Batch")

    def filters(self) -> dict[str, Any]:
        """Cleaned filters; invalid values fall back to the defaults (the errors are shown beside them)."""
        data = self.cleaned_data if self.is_bound else {}
        return {
            "action": data.get("action") or "",
            "actor": data.get("actor") or "",
            "since": data.get("since"),
            "until": data.get("until"),
            "q": data.get("q") or "",
            "batch": data.get("batch"),
        }


class DreamStartForm(forms.Form):
    """The operations page's "run now" (the agent's mode) and "dry run" (always dry) buttons."""

    dry = forms.BooleanField(required=False)


class DreamModeForm(forms.Form):
    mode = forms.ChoiceField(
        choices=[
            ("dry_run", "Dry run: propose only, change nothing"),
            ("apply", "Apply: apply what the review policy allows, queue the rest"),
        ],
        label="Dream mode",
    )


# --- operations: origin purge, erasure, reassignment (SPEC D8, M5; admins) ---------------------------------

CONFIRM_MISMATCH = "confirmation_mismatch"


class _Confirmed(forms.Form):
    """A two-step POST: ``step=preview`` shows what would happen; ``step=confirm`` does it when ``confirm`` is
    typed exactly as ``expected()`` asks (a stable error code ``confirmation_mismatch`` otherwise)."""

    step = forms.ChoiceField(choices=[("preview", "preview"), ("confirm", "confirm")], initial="preview")
    confirm = forms.CharField(required=False, max_length=600, strip=True, label="Type to confirm")

    def expected(self) -> str:
        """What the person must type: each concrete form (purge, erase, reassign) says it; the base is never
        used on its own."""
        raise NotImplementedError(f"{type(self).__name__} must say what is typed to confirm")

    @property
    def confirming(self) -> bool:
        return self.is_valid() and self.cleaned_data.get("step") == "confirm"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("step") == "confirm" and not self.errors:
            if data.get("confirm", "") != self.expected():
                self.add_error(
                    "confirm",
                    forms.ValidationError(
                        "Type %(what)s exactly to confirm.",
                        code=CONFIRM_MISMATCH,
                        params={"what": f"“{self.expected()}”"},
                    ),
                )
        return data


class PurgeForm(_Confirmed):
    origin = forms.CharField(max_length=256, strip=True, label="Origin (exact)")
    since = UTCDateTimeField(required=False, label="Only rows ingested since (UTC, optional)")

    def expected(self) -> str:
        return str(self.cleaned_data.get("origin") or "")


class EraseForm(_Confirmed):
    subject = forms.CharField(required=False, max_length=512, strip=True, label="Subject (exact)")
    origin = forms.CharField(required=False, max_length=256, strip=True, label="Origin (exact)")
    reason = forms.CharField(max_length=256, strip=True, label="Reason (kept in the audit log)")

    def clean(self) -> dict[str, Any]:
        data = forms.Form.clean(self) or {}
        if not data.get("subject") and not data.get("origin") and "subject" not in self.errors:
            self.add_error(
                "subject", forms.ValidationError("Give a subject, an origin or both.", code="required")
            )
        return super().clean()

    def expected(self) -> str:
        return "erase " + str(self.cleaned_data.get("subject") or self.cleaned_data.get("origin") or "")


class ReassignForm(_Confirmed):
    subject = forms.CharField(
        required=False, max_length=512, strip=True, label="Subject (exact; empty moves every row)"
    )
    to_agent = forms.CharField(max_length=128, strip=True, label="To agent")

    def expected(self) -> str:
        return str(self.cleaned_data.get("to_agent") or "")
