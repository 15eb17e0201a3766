"""Forms of the queues: a decision with its reason, a bulk decision over a filter (generic), and the quarantine
desk's filters and reasons. Filters live in the URL, so they are GET forms; decisions are POSTs."""

from __future__ import annotations

from typing import Any

from django import forms

from memory.engine import REJECT_REASONS

MAX_QUERY_CHARS = 500
MAX_NOTE_CHARS = 1900  # the engine takes reasons up to 2000 characters: "<code>: <note>"
BULK_CONFIRM_OVER = 10  # a bulk decision over more items than this needs the count typed in


# --- every queue ----------------------------------------------------------------------------------------------


class DecisionForm(forms.Form):
    """Approve or reject one item: a reason from the queue's fixed list, plus free text (required for
    "other"). The engine checks the reason again."""

    reason = forms.ChoiceField(
        choices=[], label="Reason", error_messages={"required": "Pick a reason: it is required."}
    )
    note = forms.CharField(required=False, max_length=MAX_NOTE_CHARS, strip=True, label="Note")

    def __init__(self, choices: list[tuple[str, str]], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reason"].choices = choices

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("reason") == "other" and not data.get("note"):
            self.add_error("note", "Say why: the reason “other” needs a note.")
        return data

    def reason_text(self) -> str:
        """What the audit log records: ``code`` or ``code: note``."""
        code, note = self.cleaned_data["reason"], self.cleaned_data.get("note") or ""
        return f"{code}: {note}" if note else code


class ItemIdsField(forms.CharField):
    """The exact items a bulk preview showed, as comma-separated ids (sorted, no duplicates)."""

    widget = forms.HiddenInput

    def __init__(self, *, nouns: str = "items", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error_messages["invalid"] = f"The list of {nouns} is not valid: open the preview again."

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


def ids_value(ids: list[int]) -> str:
    """What the preview form carries: the ids it would decide, sorted."""
    return ",".join(str(i) for i in sorted(ids))


class BulkDecisionForm(DecisionForm):
    """A decision over the pending items matching the queue's filter: the exact items the reviewer saw in the
    preview (and their count), and above the threshold that count typed in again."""

    expected = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    confirm = forms.CharField(required=False, max_length=12, strip=True)

    def __init__(
        self, choices: list[tuple[str, str]], *args: Any, nouns: str = "items", **kwargs: Any
    ) -> None:
        super().__init__(choices, *args, **kwargs)
        self.nouns = nouns
        # at most MAX_BULK (500) ids of up to 19 digits each, plus the commas
        self.fields["ids"] = ItemIdsField(required=False, max_length=10_000, nouns=nouns)
        self.fields["confirm"].label = f"Type the number of {nouns}"

    def selection_changed(self, ids: list[int]) -> str:
        """An error message unless ``ids`` (what the filter matches now) are exactly the items the reviewer
        previewed, else ""."""
        expected = self.cleaned_data.get("expected")
        seen = set(self.cleaned_data.get("ids") or [])
        now = set(ids)
        if expected != len(now):
            return (
                f"The {self.nouns} matching this filter changed ({len(now)} now, {expected} when you looked): "
                "check the new count and sample, then confirm again."
            )
        if seen != now:
            new, gone = len(now - seen), len(seen - now)
            return (
                f"The {self.nouns} matching this filter changed since you looked: still {len(now)}, but "
                f"{new} new and {gone} no longer matching. Nothing was decided: check the new sample, "
                "then confirm again."
            )
        return ""

    def check_confirm(self, count: int) -> str:
        """An error message if the typed confirmation is missing above the threshold, else ""."""
        if count > BULK_CONFIRM_OVER and self.cleaned_data.get("confirm") != str(count):
            self.add_error("confirm", f"Type {count} to confirm.")
            return (
                f"Type the number of {self.nouns} ({count}) to confirm a bulk decision over "
                f"{BULK_CONFIRM_OVER}."
            )
        return ""


# --- the quarantine desk (SPEC D3, P8) ------------------------------------------------------------------------

QUARANTINE_STATUS_CHOICES = [("pending", "Pending"), ("decided", "Decided"), ("all", "All")]
QUARANTINE_SORTS = {
    "expiry": "soonest expiry first",
    "size": "most facts first",
    "impact": "most superseded facts first",
    "origin": "by origin",
}
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
    sort = forms.ChoiceField(required=False, choices=list(QUARANTINE_SORTS.items()), label="Sort")

    def filters(self) -> dict[str, Any]:
        """Cleaned filters; invalid values fall back to the defaults (soonest expiry first)."""
        data = self.cleaned_data if self.is_bound else {}
        return {
            "sort": data.get("sort") or "expiry",
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
    "mistake": "The decision was a mistake",
    "other": "Other (say why)",
}
APPROVE_REASONS = ("verified", "legitimate_update", "other")
# ttl_expired is the system's reason when the time runs out; people pick from the rest
PERSON_REJECT_REASONS = tuple(r for r in REJECT_REASONS if r != "ttl_expired")


QUARANTINE_REVERT_REASONS = ("mistake", "poisoning", "verified", "other")


def quarantine_reasons(decision: str) -> list[tuple[str, str]]:
    if decision == "revert":
        return [(c, REASON_LABELS.get(c, c)) for c in QUARANTINE_REVERT_REASONS]
    codes = APPROVE_REASONS if decision == "approve" else PERSON_REJECT_REASONS
    return [(c, REASON_LABELS.get(c, c)) for c in codes]


# --- the review queue (SPEC D2, B7) ---------------------------------------------------------------------------

REVIEW_STATUS_CHOICES = [
    ("pending", "Pending"),
    ("applied", "Applied automatically"),
    ("approved", "Approved"),
    ("rejected", "Rejected"),
    ("stale", "Stale"),
    ("decided", "All decided"),
    ("all", "All"),
]
REVIEW_KIND_LABELS = {
    "conflict": "Conflicts",
    "lint": "Lint findings",
    "low_confidence": "Low-confidence facts",
    "attitude": "Attitudes",
    "skill": "Skills",
}
REVIEW_SORTS = {
    "confidence": "lowest confidence first",
    "expiry": "soonest expiry first",
    "impact": "highest impact first",
    "recent": "latest decision first",
}
IMPACT_CHOICES = [("", "Any impact"), ("high", "High impact"), ("low", "Low impact")]


class ReviewFilterForm(forms.Form):
    status = forms.ChoiceField(required=False, choices=REVIEW_STATUS_CHOICES, label="Items")
    kind = forms.ChoiceField(
        required=False, choices=[("", "Any kind"), *REVIEW_KIND_LABELS.items()], label="Kind"
    )
    conf_min = forms.FloatField(required=False, min_value=0.0, max_value=1.0, label="Confidence from")
    conf_max = forms.FloatField(required=False, min_value=0.0, max_value=1.0, label="Confidence to")
    impact = forms.ChoiceField(required=False, choices=IMPACT_CHOICES, label="Impact")
    run = forms.IntegerField(required=False, min_value=1, label="Dream run")
    q = forms.CharField(required=False, max_length=MAX_QUERY_CHARS, strip=True, label="Text")
    sort = forms.ChoiceField(required=False, choices=list(REVIEW_SORTS.items()), label="Sort")
    item = forms.IntegerField(required=False, min_value=1, label="Item")

    def filters(self) -> dict[str, Any]:
        """Cleaned filters; invalid values fall back to the defaults. The sort defaults to lowest confidence
        first for pending items and to the latest decision first for decided ones."""
        data = self.cleaned_data if self.is_bound else {}
        status = data.get("status") or "pending"
        return {
            "status": status,
            "kind": data.get("kind") or "",
            "conf_min": data.get("conf_min"),
            "conf_max": data.get("conf_max"),
            "impact": data.get("impact") or "",
            "run": data.get("run"),
            "q": data.get("q") or "",
            "sort": data.get("sort") or ("confidence" if status in ("pending", "all") else "recent"),
            "item": data.get("item"),
        }


REVIEW_REASON_LABELS = {
    "verified": "Verified: the proposal is right",
    "corrected": "Corrected: right once edited",
    "wrong": "Wrong: the proposal is mistaken",
    "not_related": "Not related: the two are different facts",
    "outdated": "Outdated",
    "poisoning": "Poisoning",
    "out_of_scope": "Out of scope",
    "mistake": "The decision was a mistake",
    "other": "Other (say why)",
}
REVIEW_REASONS = {
    "approve": ("verified", "other"),
    "edit": ("corrected", "verified", "other"),
    "reject": ("wrong", "not_related", "outdated", "poisoning", "out_of_scope", "other"),
    "revert": ("mistake", "wrong", "outdated", "poisoning", "other"),
}


def review_reasons(decision: str) -> list[tuple[str, str]]:
    """The fixed reasons of the review queue for ``decision`` (approve, edit, reject, revert)."""
    return [(c, REVIEW_REASON_LABELS[c]) for c in REVIEW_REASONS.get(decision, REVIEW_REASONS["reject"])]


VERDICT_CHOICES = [
    ("MERGE", "MERGE: keep the earlier row, the later reaffirms it"),
    ("SUPERSEDE", "SUPERSEDE: the new value replaces the old from its start"),
    ("COEXIST", "COEXIST: both stay, nothing changes"),
]
MAX_VALUE_CHARS = 4096


class EditForm(DecisionForm):
    """Edit then approve a conflict: the verdict the reviewer chooses and, optionally, the corrected value
    (written on the kept row's key). The engine validates the edit again (``invalid_edit``)."""

    verdict = forms.ChoiceField(
        choices=[("", "Choose the verdict…"), *VERDICT_CHOICES],
        label="Verdict",
        error_messages={"required": "Choose the verdict."},
    )
    content = forms.CharField(required=False, max_length=MAX_VALUE_CHARS, strip=True, label="Corrected fact")
    object = forms.CharField(required=False, max_length=MAX_VALUE_CHARS, strip=True, label="Corrected value")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("object") and not data.get("content"):
            self.add_error("content", "Write the corrected fact as a sentence too.")
        return data

    def edited(self) -> dict[str, Any]:
        """What the engine gets: the verdict, plus the corrected fact when one was written."""
        data = self.cleaned_data
        out: dict[str, Any] = {"verdict": data["verdict"]}
        if data.get("content"):
            out["content"] = data["content"]
            out["object"] = data.get("object") or None
        return out


class ReviewLogForm(forms.Form):
    item = forms.IntegerField(required=False, min_value=1, label="Item")
    memory = forms.RegexField(required=False, regex=r"^[A-Za-z0-9_:.-]{1,64}$", label="Memory")
