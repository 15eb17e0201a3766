"""Parsing of query strings: every filter lives in the URL, so every filter is a GET form."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django import forms

from memory.engine import REJECT_REASONS, SCOPES
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
        choices=[("current", "Current only"), ("all", "All rows (history)")],
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


class UTCDateTimeField(forms.Field):
    """An ``<input type="datetime-local">`` value, read as UTC. An explicit offset is honoured."""

    widget = forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}, format="%Y-%m-%dT%H:%M:%S")
    default_error_messages = {"invalid": "Enter a date and time like 2024-05-01T12:00."}

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
        return parsed.astimezone(UTC)


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


# --- quarantine desk (SPEC D3, P8) ------------------------------------------------------------------------

QUARANTINE_STATUS_CHOICES = [("pending", "Pending"), ("decided", "Decided"), ("all", "All")]


MAX_EXPIRING_HOURS = 24 * 7


class QuarantineFilterForm(forms.Form):
    status = forms.ChoiceField(required=False, choices=QUARANTINE_STATUS_CHOICES, label="Batches")
    origin_class = forms.CharField(required=False, max_length=64, strip=True, label="Origin class")
    origin = forms.CharField(required=False, max_length=256, label="Origin")
    q = forms.CharField(required=False, max_length=MAX_QUERY_CHARS, strip=True, label="Subject")
    expiring = forms.IntegerField(
        required=False, min_value=1, max_value=MAX_EXPIRING_HOURS, label="Expiring within (hours)"
    )
    batch = forms.IntegerField(required=False, min_value=1, label="Batch")

    def filters(self) -> dict[str, Any]:
        """Cleaned filters; invalid values fall back to the defaults."""
        data = self.cleaned_data if self.is_bound else {}
        return {
            "status": data.get("status") or "pending",
            "origin_class": data.get("origin_class") or "",
            "origin": data.get("origin") or "",
            "q": data.get("q") or "",
            "expiring": data.get("expiring"),
            "batch": data.get("batch"),
        }


REASON_LABELS = {
    "verified": "Verified: the facts are right",
    "legitimate_update": "A legitimate bulk update",
    "wrong": "Wrong",
    "duplicate": "Duplicate",
    "outdated": "Outdated",
    "poisoning": "Poisoning",
    "out_of_scope": "Out of scope",
    "other": "Other (say why)",
}
APPROVE_REASONS = ("verified", "legitimate_update", "other")
# ttl_expired is the system's reason when the time runs out; people pick from the rest
PERSON_REJECT_REASONS = tuple(r for r in REJECT_REASONS if r != "ttl_expired")
MAX_NOTE_CHARS = 1900  # the engine takes reasons up to 2000 characters: "<code>: <note>"


class DecisionForm(forms.Form):
    """Approve or reject a quarantined batch: a reason from the fixed list, plus free text (required for
    "other"). The engine checks the reason again."""

    reason = forms.ChoiceField(
        choices=[], label="Reason", error_messages={"required": "Pick a reason: it is required."}
    )
    note = forms.CharField(required=False, max_length=MAX_NOTE_CHARS, strip=True, label="Note")

    def __init__(self, decision: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.decision = decision
        self.fields["reason"].choices = decision_choices(decision)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("reason") == "other" and not data.get("note"):
            self.add_error("note", "Say why: the reason “other” needs a note.")
        return data

    def reason_text(self) -> str:
        """What the audit log records: ``code`` or ``code: note``."""
        code, note = self.cleaned_data["reason"], self.cleaned_data.get("note") or ""
        return f"{code}: {note}" if note else code


BULK_CONFIRM_OVER = 10  # a bulk decision over more batches than this needs the count typed in


class BatchIdsField(forms.CharField):
    """The exact batches a bulk preview showed, as comma-separated ids (sorted, no duplicates)."""

    widget = forms.HiddenInput
    default_error_messages = {"invalid": "The list of batches is not valid: open the preview again."}

    def to_python(self, value: Any) -> list[int]:  # type: ignore[override]
        text = super().to_python(value)
        if not text:
            return []
        try:
            ids = {int(part) for part in text.split(",")}
        except ValueError:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None
        if any(i < 1 for i in ids):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return sorted(ids)


def batch_ids_value(ids: list[int]) -> str:
    """What the preview form carries: the ids it would decide, sorted."""
    return ",".join(str(i) for i in sorted(ids))


class BulkDecisionForm(DecisionForm):
    """A decision over the pending batches matching the desk's filter: the exact batches the reviewer saw in
    the preview (and their count), and above the threshold that count typed in again."""

    expected = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    # at most MAX_BULK (500) ids of up to 19 digits each, plus the commas
    ids = BatchIdsField(required=False, max_length=10_000)
    confirm = forms.CharField(required=False, max_length=12, strip=True, label="Type the number of batches")

    def selection_changed(self, ids: list[int]) -> str:
        """An error message unless ``ids`` (what the filter matches now) are exactly the batches the reviewer
        previewed, else ""."""
        expected = self.cleaned_data.get("expected")
        seen = set(self.cleaned_data.get("ids") or [])
        now = set(ids)
        if expected != len(now):
            return (
                f"The batches matching this filter changed ({len(now)} now, {expected} when you looked): "
                "check the new count and sample, then confirm again."
            )
        if seen != now:
            new, gone = len(now - seen), len(seen - now)
            return (
                f"The batches matching this filter changed since you looked: still {len(now)}, but "
                f"{new} new and {gone} no longer matching. Nothing was decided: check the new sample, "
                "then confirm again."
            )
        return ""

    def check_confirm(self, count: int) -> str:
        """An error message if the typed confirmation is missing above the threshold, else ""."""
        if count > BULK_CONFIRM_OVER and self.cleaned_data.get("confirm") != str(count):
            self.add_error("confirm", f"Type {count} to confirm.")
            return (
                f"Type the number of batches ({count}) to confirm a bulk decision over {BULK_CONFIRM_OVER}."
            )
        return ""


def decision_choices(decision: str) -> list[tuple[str, str]]:
    codes = APPROVE_REASONS if decision == "approve" else PERSON_REJECT_REASONS
    return [(c, REASON_LABELS.get(c, c)) for c in codes]


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
