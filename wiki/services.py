"""Wiki services (SPEC W1–W5, D5): publish auto pages, revise, promote, remove, rank, lay out as markdown.

Pages and revisions are wiki rows and are written here; memory rows (the pointer row, audit events) are only
ever written by ``memory.engine`` functions called from here.

Decisions worth knowing:

* **Pointer row.** One fact per page: subject ``wiki:auto/<doc_type>/<slug>`` (the page's identity from its
  first publication; it does not change on promotion), predicate ``documented_in``, object the page's current
  path, content one short line (doc type, title, path; never the summary or the text). An auto page's pointer
  is written with origin ``channel`` (trust 0.3) through the injection scan and the burst guard. Promotion
  writes a new value of the same key (object ``curated/<doc_type>/<slug>``, origin ``operator:wiki-curation``,
  trust 0.8) that supersedes the auto one, so there is still exactly one current pointer row, its trust follows
  the page and the auto row stays in the key's history. ``remove`` ends the key with
  ``expire_by_subject(…, "auto_page_removed")``.
* **Burst guard.** Every publication of a page (a new page or a new revision) is one fact write about the page's
  subject from ``channel``, so the guard counts it: the ``max_per_subject``-th publication of one page inside
  the guard's window (5 in an hour by default) quarantines that page's pointer writes of the window. The page
  and its revisions are kept, but the page is left out of wiki search until a reviewer approves the batch on
  the quarantine desk (a rejection retracts the pointer; the page stays out of search). Distinct pages are
  distinct subjects and never trip the guard together; the 20-pages-a-day limit covers those.
* **Agents cannot overwrite curated text.** Republishing the slug of a promoted page records a revision
  (outcome ``proposed``) that a curator sees in the diff since the last accepted revision; the page keeps its
  curated text, trust and pointer until a curator revises it.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import yaml
from django.db.models import (
    Case,
    Exists,
    ExpressionWrapper,
    F,
    FloatField,
    Max,
    OuterRef,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Cast, Greatest
from django.utils import timezone
from django.utils.text import slugify

from memory import engine
from memory.models import Memory

from .models import DOC_TYPES, NAMESPACES, SOURCE_TYPES, WikiPage, WikiRevision

AUTO_AUTHOR = "auto-distill"
AUTO_TRUST = Decimal("0.300")
AUTO_SOURCE_TYPE = "raw_dialogue"
CURATED_TRUST = Decimal("0.800")
CURATED_SOURCE_TYPE = "user_statement"
POINTER_PREDICATE = "documented_in"
POINTER_ORIGIN = "channel"
CURATION_ORIGIN = "operator:wiki-curation"
REMOVED_EVENT = "auto_page_removed"
DAILY_AUTO_PAGES = 20
DAILY_PUBLISHED_REVISIONS = 100  # revisions an agent's publications may add per UTC day, new pages included
PUBLISH_REASONS = ("published", "republished", "republished after removal")
MAX_TITLE = 300
MAX_TAGS = engine.MAX_TAGS
MAX_TAG_CHARS = 100  # engine.check_tags
MAX_SUMMARY_BYTES = 8 * 1024
MAX_TEXT_BYTES = engine.MAX_CONTENT_BYTES  # 64 KB
MAX_REASON = 2000
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class InjectionBlocked(engine.EngineError):
    code = "prompt_injection"


class PageRemoved(engine.EngineError):
    code = "page_removed"


class AlreadyCurated(engine.EngineError):
    code = "already_curated"


class PathTaken(engine.EngineError):
    code = "path_taken"


class InvalidWikiFile(engine.EngineError):
    code = "invalid_wiki_file"


# --- W1: doc types and slugs ------------------------------------------------------------------------------


def normalise_doc_type(doc_type: Any) -> str:
    """One of the five doc types; anything else (or nothing) is ``reference`` (SPEC W1)."""
    value = doc_type.strip().lower() if isinstance(doc_type, str) else ""
    return value if value in DOC_TYPES else "reference"


def normalise_title(title: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", title).lower().split())


def hashed_slug(doc_type: str, title: str) -> str:
    digest = hashlib.sha256(normalise_title(title).encode("utf-8")).hexdigest()
    return f"{doc_type}-{digest[:8]}"


def make_slug(*, doc_type: str, title: str, slug: Any = None) -> str:
    """The caller's slug if it matches ``^[a-z0-9][a-z0-9-]{0,63}$``; without one, the title slugified if that
    matches; else ``<doc_type>-<first 8 hex of sha256(normalised title)>`` (SPEC W1)."""
    if slug is not None and not isinstance(slug, str):
        raise engine.InvalidArgument("slug must be a string", field="slug")
    if slug is not None and slug.strip():
        candidate = slug.strip()
    else:
        candidate = slugify(title).replace("_", "-")[:64].strip("-")
    return candidate if SLUG_RE.fullmatch(candidate) else hashed_slug(doc_type, title)


def pointer_subject(doc_type: str, slug: str) -> str:
    return f"wiki:auto/{doc_type}/{slug}"


# --- validation ---------------------------------------------------------------------------------------------


def _check_title(title: Any) -> str:
    value = engine.check_text(title, field="title", required=True, limit=MAX_TITLE)
    assert value is not None
    if any(ord(ch) < 32 for ch in value):
        raise engine.InvalidArgument("title must be one line", field="title")
    return value


def _check_body(value: Any, *, field: str, limit: int) -> str:
    if not isinstance(value, str):
        raise engine.InvalidArgument(f"{field} must be a string", field=field)
    if "\x00" in value:
        raise engine.InvalidArgument(f"{field} contains a NUL character", field=field)
    value = value.replace("\r\n", "\n").strip("\n")
    if not value.strip():
        raise engine.InvalidArgument(f"{field} must not be empty", field=field)
    size = len(value.encode("utf-8"))
    if size > limit:
        raise engine.ContentTooLarge(
            f"{field} is {size} bytes; the limit is {limit} bytes", field=field, limit=limit
        )
    return value


def _check_reason(reason: Any) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise engine.InvalidArgument("a reason is required", field="reason")
    if len(reason) > MAX_REASON:
        raise engine.InvalidArgument(f"reason is longer than {MAX_REASON} characters", field="reason")
    return reason.strip()


def _check_page(page: Any) -> WikiPage:
    """The page re-read inside the caller's transaction with its row locked (``SELECT … FOR UPDATE``), so a
    curator's action and an agent's republication of the same page run one after the other and each sees
    what the other committed (SQLite serialises every writer already)."""
    if not isinstance(page, WikiPage) or page.pk is None:
        raise engine.InvalidArgument("page must be a saved wiki page", field="page")
    fresh = WikiPage.objects.select_for_update().filter(pk=page.pk).first()
    if fresh is None:
        raise engine.NotFound("no wiki page with that id", field="page")
    return fresh


def _audit(
    *,
    agent_id: str,
    actor: str,
    action: str,
    subject: str | None = None,
    memory_id: str | None = None,
    reason: str = "",
    **details: Any,
) -> int:
    return engine.audit_record(
        agent_id=agent_id,
        actor=actor,
        action=action,
        subject=subject,
        memory_id=memory_id,
        reason=reason,
        details=details,
    )


def _scan(*, agent_id: str, actor: str, subject: str, title: str, summary: str, text: str) -> None:
    """The shared injection rules over title, summary and text together; blocked → audited and refused."""
    result = engine.scan_injection("\n".join((title, summary, text)))
    if not result.blocked:
        return
    _audit(
        agent_id=agent_id,
        actor=actor,
        action="prompt_injection",
        subject=subject,
        reason="dropped wiki page: " + ", ".join(result.rules),
        rules=list(result.rules),
        score=result.score,
        origin=POINTER_ORIGIN,
        snippet=title[:200],
    )
    raise InjectionBlocked(
        "the page was dropped: it matches prompt-injection rules (" + ", ".join(result.rules) + ")",
        rules=list(result.rules),
    )


# --- pointer rows (W3) ------------------------------------------------------------------------------------


def pointer_content(page: WikiPage) -> str:
    """The pointer row's content: one short line, never the page's summary or text."""
    title = page.title if len(page.title) <= 160 else page.title[:159] + "…"
    return f"Wiki {page.doc_type} page “{title}” at {page.path}"


def _write_pointer(page: WikiPage, *, actor: str, curated: bool, protect: bool) -> engine.StoreResult:
    return engine.store_temporal(
        agent_id=page.agent_id,
        content=pointer_content(page),
        subject=page.pointer_subject,
        predicate=POINTER_PREDICATE,
        object=page.path,
        origin=CURATION_ORIGIN if curated else POINTER_ORIGIN,
        origin_trust=float(page.trust),
        layer="semantic",
        tags=["wiki", page.doc_type],
        metadata={"wiki_page": page.pk, "wiki_path": page.path},
        protect=protect,
        actor=actor,
    )


def _repoint(page: WikiPage, *, actor: str, curated: bool) -> engine.StoreResult:
    """A new pointer value for an existing page (its title, path or trust changed), remembered on the page."""
    stored = _write_pointer(page, actor=actor, curated=curated, protect=False)
    page.pointer_id = stored.id
    page.save(update_fields=["pointer_id"])
    return stored


def current_pointer(page: WikiPage) -> Memory | None:
    """The page's current, believed pointer row (None when removed, quarantined or retracted)."""
    return (
        Memory.objects.filter(
            agent_id=page.agent_id, subject=page.pointer_subject, predicate=POINTER_PREDICATE
        )
        .filter(engine.belief_current_q())
        .first()
    )


# --- revisions ----------------------------------------------------------------------------------------------


def _add_revision(
    page: WikiPage,
    *,
    title: str,
    summary: str,
    text: str,
    tags: list[str],
    actor: str,
    reason: str,
    at: datetime,
    accepted: bool = False,
) -> WikiRevision:
    last = page.revisions.aggregate(n=Max("number"))["n"] or 0
    return WikiRevision.objects.create(
        page=page,
        number=last + 1,
        title=title,
        summary=summary,
        original_text=text,
        tags=tags,
        actor=actor,
        reason=reason,
        created_at=at,
        accepted=accepted,
    )


def latest_revision(page: WikiPage) -> WikiRevision | None:
    return page.revisions.order_by("-number").first()


def _same_content(page_or_rev: WikiPage | WikiRevision, title: str, summary: str, text: str, tags: list[str]):
    return (
        page_or_rev.title == title
        and page_or_rev.summary == summary
        and page_or_rev.original_text == text
        and list(page_or_rev.tags or []) == tags
    )


# --- W2/W3: publishing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishResult:
    page: WikiPage
    revision: int
    outcome: str  # created | revised | unchanged | proposed | quarantined
    pointer_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.page.path,
            "trust": float(self.page.trust),
            "source_type": self.page.source_type,
            "pointer_id": self.pointer_id,
            "revision": self.revision,
            "outcome": self.outcome,
        }


def publish_auto(
    *,
    agent_id: str,
    doc_type: str,
    title: str,
    summary: str,
    original_text: str,
    slug: str | None = None,
    tags: Any = (),
    actor: str = "system",
) -> WikiPage:
    """Publish (or republish) an auto page: W1 slug, W2 frontmatter defaults, W3 pointer row. See
    ``publish_auto_result`` for the outcome; this returns the page."""
    return publish_auto_result(
        agent_id=agent_id,
        doc_type=doc_type,
        title=title,
        summary=summary,
        original_text=original_text,
        slug=slug,
        tags=tags,
        actor=actor,
    ).page


def publish_auto_result(
    *,
    agent_id: str,
    doc_type: str,
    title: str,
    summary: str,
    original_text: str,
    slug: str | None = None,
    tags: Any = (),
    actor: str = "system",
) -> PublishResult:
    """An agent's distilled document becomes ``auto/<doc_type>/<slug>`` at trust 0.300, ``raw_dialogue``.

    Trust and source_type are not parameters: callers cannot set them. The page is injection-scanned (blocked
    → ``prompt_injection`` error, audited, nothing written); a new page counts against 20 auto pages per agent
    per UTC day (``rate_limited`` after); the same slug again adds a revision instead of a second page."""
    agent_id = engine.check_agent_id(agent_id)
    actor = engine.check_actor(actor)
    doc = normalise_doc_type(doc_type)
    title = _check_title(title)
    summary = _check_body(summary, field="summary", limit=MAX_SUMMARY_BYTES)
    text = _check_body(original_text, field="original_text", limit=MAX_TEXT_BYTES)
    tag_list = engine.check_tags(tags)
    the_slug = make_slug(doc_type=doc, title=title, slug=slug)
    subject = pointer_subject(doc, the_slug)
    # Outside the write transaction: the audit event of a dropped page must survive the refusal.
    _scan(agent_id=agent_id, actor=actor, subject=subject, title=title, summary=summary, text=text)
    return _publish(
        agent_id=agent_id,
        doc=doc,
        slug=the_slug,
        subject=subject,
        title=title,
        summary=summary,
        text=text,
        tags=tag_list,
        actor=actor,
    )


def _utc_midnight(t: datetime) -> datetime:
    t = t.astimezone(UTC)
    return t.replace(hour=0, minute=0, second=0, microsecond=0)


def _check_daily_revisions(agent_id: str, t: datetime) -> None:
    """At most DAILY_PUBLISHED_REVISIONS revisions from an agent's publications per UTC day (new pages and
    republications alike; an unchanged republication adds none). Called under the publish lock."""
    added = WikiRevision.objects.filter(
        page__agent_id=agent_id, created_at__gte=_utc_midnight(t), reason__in=PUBLISH_REASONS
    ).count()
    if added >= DAILY_PUBLISHED_REVISIONS:
        raise engine.RateLimited(
            f"at most {DAILY_PUBLISHED_REVISIONS} page revisions from publishing per agent per UTC day; "
            "try again tomorrow",
            limit=DAILY_PUBLISHED_REVISIONS,
        )


@engine.write_transaction
def _publish(
    *,
    agent_id: str,
    doc: str,
    slug: str,
    subject: str,
    title: str,
    summary: str,
    text: str,
    tags: list[str],
    actor: str,
) -> PublishResult:
    engine.lock_key(agent_id, "wiki:pages", "publish")  # serialise one agent's publishers (the daily count)
    t = timezone.now()
    # the page row is locked like the curator's actions lock it (_check_page): a promotion or revision of the
    # page in flight commits first, and this publication sees it
    page = WikiPage.objects.select_for_update().filter(agent_id=agent_id, pointer_subject=subject).first()
    if page is None:
        made_today = WikiPage.objects.filter(agent_id=agent_id, created__gte=_utc_midnight(t)).count()
        if made_today >= DAILY_AUTO_PAGES:
            raise engine.RateLimited(
                f"at most {DAILY_AUTO_PAGES} new auto pages per agent per UTC day; republishing an existing "
                "slug is still possible",
                limit=DAILY_AUTO_PAGES,
            )
        _check_daily_revisions(agent_id, t)
        page = WikiPage.objects.create(
            agent_id=agent_id,
            namespace="auto",
            doc_type=doc,
            slug=slug,
            title=title,
            tags=tags,
            author=AUTO_AUTHOR,
            trust=AUTO_TRUST,
            source_type=AUTO_SOURCE_TYPE,
            created=t,
            updated=t,
            summary=summary,
            original_text=text,
            pointer_subject=subject,
        )
        rev = _add_revision(
            page, title=title, summary=summary, text=text, tags=tags, actor=actor, reason="published", at=t
        )
        outcome = "created"
    elif page.namespace == "curated" and not page.removed:
        last = latest_revision(page)
        if last is not None and _same_content(last, title, summary, text, tags):
            return PublishResult(page, last.number, "unchanged", page.pointer_id)
        _check_daily_revisions(agent_id, t)
        rev = _add_revision(
            page, title=title, summary=summary, text=text, tags=tags, actor=actor, reason="republished", at=t
        )
        _audit(
            agent_id=agent_id,
            actor=actor,
            action="wiki_propose",
            subject=subject,
            memory_id=page.pointer_id,
            reason="an agent republished a curated page; kept as a revision for review",
            path=page.path,
            revision=rev.number,
        )
        return PublishResult(page, rev.number, "proposed", page.pointer_id)
    else:
        last = latest_revision(page)
        if not page.removed and last is not None and _same_content(page, title, summary, text, tags):
            return PublishResult(page, last.number, "unchanged", page.pointer_id)
        _check_daily_revisions(agent_id, t)
        reason = "republished after removal" if page.removed else "republished"
        page.title, page.summary, page.original_text, page.tags, page.updated = title, summary, text, tags, t
        changed = ["title", "summary", "original_text", "tags", "updated"]
        if page.removed:  # a removed page comes back as a new, unchecked auto page, even if it was curated
            page.namespace, page.trust, page.source_type = "auto", AUTO_TRUST, AUTO_SOURCE_TYPE
            page.author, page.last_verified = AUTO_AUTHOR, None
            page.removed_at, page.removed_reason = None, ""
            changed += ["namespace", "trust", "source_type", "author", "last_verified", "removed_at"]
            changed.append("removed_reason")
        page.save(update_fields=changed)
        rev = _add_revision(
            page, title=title, summary=summary, text=text, tags=tags, actor=actor, reason=reason, at=t
        )
        outcome = "revised"
    stored = _write_pointer(page, actor=actor, curated=False, protect=True)
    if stored.outcome == "dropped":  # the scan above passed, so this is the pointer line itself
        raise InjectionBlocked("the page's pointer row was dropped: " + (stored.reason or ""))
    if stored.outcome == "quarantined":
        outcome = "quarantined"
    page.pointer_id = stored.id
    page.save(update_fields=["pointer_id"])
    _audit(
        agent_id=agent_id,
        actor=actor,
        action="wiki_publish",
        subject=subject,
        memory_id=stored.id,
        reason=f"{outcome} {page.path} r{rev.number}",
        path=page.path,
        revision=rev.number,
        outcome=outcome,
        pointer_outcome=stored.outcome,
    )
    return PublishResult(page, rev.number, outcome, stored.id)


# --- W5: curation -----------------------------------------------------------------------------------------


@engine.write_transaction
def revise(
    *,
    page: WikiPage,
    actor: str,
    title: str | None = None,
    summary: str | None = None,
    original_text: str | None = None,
    tags: Any = None,
    reason: str,
) -> WikiRevision:
    """A curator's edit (e.g. before promoting): a new revision that becomes the page's text. On a curated page
    the curator's edit is accepted at once. A changed title re-points the pointer row (same trust)."""
    page = _check_page(page)
    actor = engine.check_actor(actor)
    reason = _check_reason(reason)
    if page.removed:
        raise PageRemoved("this page was removed; it cannot be revised", field="page")
    new_title = page.title if title is None else _check_title(title)
    new_summary = (
        page.summary if summary is None else _check_body(summary, field="summary", limit=MAX_SUMMARY_BYTES)
    )
    new_text = (
        page.original_text
        if original_text is None
        else _check_body(original_text, field="original_text", limit=MAX_TEXT_BYTES)
    )
    new_tags = list(page.tags or []) if tags is None else engine.check_tags(tags)
    last = latest_revision(page)
    if (
        last is not None
        and _same_content(last, new_title, new_summary, new_text, new_tags)
        and _same_content(page, new_title, new_summary, new_text, new_tags)
    ):
        raise engine.InvalidArgument("nothing changed", field="original_text")
    t = timezone.now()
    title_changed = new_title != page.title
    page.title, page.summary, page.original_text, page.tags, page.updated = (
        new_title,
        new_summary,
        new_text,
        new_tags,
        t,
    )
    curated = page.namespace == "curated"
    changed = ["title", "summary", "original_text", "tags", "updated"]
    if curated:
        page.last_verified = t
        changed.append("last_verified")
    page.save(update_fields=changed)
    rev = _add_revision(
        page,
        title=new_title,
        summary=new_summary,
        text=new_text,
        tags=new_tags,
        actor=actor,
        reason=reason,
        at=t,
        accepted=curated,
    )
    if title_changed and current_pointer(page) is not None:
        _repoint(page, actor=actor, curated=curated)
    _audit(
        agent_id=page.agent_id,
        actor=actor,
        action="wiki_revise",
        subject=page.pointer_subject,
        memory_id=page.pointer_id,
        reason=reason,
        path=page.path,
        revision=rev.number,
    )
    return rev


@engine.write_transaction
def promote(*, page: WikiPage, actor: str, reason: str) -> WikiPage:
    """A curator's promotion (SPEC W5): ``curated/<doc_type>/<slug>``, trust 0.800, ``user_statement``, the
    latest revision accepted, and a new pointer value at trust 0.8 (the auto one is superseded, not copied)."""
    page = _check_page(page)
    actor = engine.check_actor(actor)
    reason = _check_reason(reason)
    if page.removed:
        raise PageRemoved("this page was removed; it cannot be promoted", field="page")
    if page.namespace == "curated":
        raise AlreadyCurated("this page is already curated", field="page")
    if WikiPage.objects.filter(
        agent_id=page.agent_id, namespace="curated", doc_type=page.doc_type, slug=page.slug
    ).exists():
        raise PathTaken(f"curated/{page.doc_type}/{page.slug} is another page already", field="page")
    t = timezone.now()
    before = page.path
    last = latest_revision(page)
    if last is not None and not _same_content(last, page.title, page.summary, page.original_text, page.tags):
        last = None
    if last is None:  # e.g. an imported page without revisions: the promoted text becomes a revision
        last = _add_revision(
            page,
            title=page.title,
            summary=page.summary,
            text=page.original_text,
            tags=list(page.tags or []),
            actor=actor,
            reason=reason,
            at=t,
        )
    WikiRevision.objects.filter(pk=last.pk).update(accepted=True)
    page.namespace = "curated"
    page.trust = CURATED_TRUST
    page.source_type = CURATED_SOURCE_TYPE
    page.last_verified = t
    page.updated = t
    page.save(update_fields=["namespace", "trust", "source_type", "last_verified", "updated"])
    stored = _repoint(page, actor=actor, curated=True)
    _audit(
        agent_id=page.agent_id,
        actor=actor,
        action="wiki_promote",
        subject=page.pointer_subject,
        memory_id=stored.id,
        reason=reason,
        path=page.path,
        previous_path=before,
        revision=last.number,
        trust=page.trust_text,
    )
    return page


@engine.write_transaction
def remove(*, page: WikiPage, actor: str, reason: str) -> WikiPage:
    """End the page's pointer with ``expire_by_subject(wiki:auto/…, "auto_page_removed")`` (never an origin
    purge: the agent's other channel memories stay) and mark the page removed; its revisions stay."""
    page = _check_page(page)
    actor = engine.check_actor(actor)
    reason = _check_reason(reason)
    if page.removed:
        raise PageRemoved("this page was removed already", field="page")
    expired = engine.expire_by_subject(
        agent_id=page.agent_id, subject=page.pointer_subject, reason=REMOVED_EVENT, actor=actor
    )
    t = timezone.now()
    page.removed_at, page.removed_reason, page.updated = t, reason, t
    page.save(update_fields=["removed_at", "removed_reason", "updated"])
    _audit(
        agent_id=page.agent_id,
        actor=actor,
        action="wiki_remove",
        subject=page.pointer_subject,
        memory_id=page.pointer_id,
        reason=reason,
        path=page.path,
        pointer_rows_expired=expired,
    )
    return page


def _revision_lines(rev: WikiRevision | None) -> list[str]:
    if rev is None:
        return []
    body = f"# {rev.title}\n\ntags: {', '.join(rev.tags or [])}\n\n## Summary\n\n{rev.summary}\n\n"
    body += f"## Original text\n\n{rev.original_text}\n"
    return body.splitlines()


def accepted_revision(page: WikiPage) -> WikiRevision | None:
    return page.revisions.filter(accepted=True).order_by("-number").first()


def diff_since_accepted(*, page: WikiPage) -> list[str]:
    """Unified-diff lines from the last accepted revision (nothing, when none is) to the latest revision."""
    accepted = accepted_revision(page)
    latest = latest_revision(page)
    if latest is None or (accepted is not None and accepted.number == latest.number):
        return []
    before = f"r{accepted.number} (accepted)" if accepted else "nothing accepted yet"
    return list(
        difflib.unified_diff(
            _revision_lines(accepted),
            _revision_lines(latest),
            fromfile=before,
            tofile=f"r{latest.number}",
            lineterm="",
        )
    )


# --- selectors ---------------------------------------------------------------------------------------------


def list_pages(
    *,
    agent_id: str,
    namespace: str | None = None,
    doc_type: str | None = None,
    age_days: int | None = None,
    status: str = "live",
) -> QuerySet[WikiPage]:
    """The agent's pages, last updated first. ``status``: live (default), removed or all; ``age_days``: updated
    within that many days."""
    qs = WikiPage.objects.filter(agent_id=agent_id)
    if namespace:
        if namespace not in NAMESPACES:
            raise engine.InvalidArgument("namespace must be auto or curated", field="namespace")
        qs = qs.filter(namespace=namespace)
    if doc_type:
        if doc_type not in DOC_TYPES:
            raise engine.InvalidArgument(f"doc_type must be one of {', '.join(DOC_TYPES)}", field="doc_type")
        qs = qs.filter(doc_type=doc_type)
    if age_days is not None:
        if isinstance(age_days, bool) or not isinstance(age_days, int) or age_days < 0:
            raise engine.InvalidArgument("age_days must be a non-negative number of days", field="age_days")
        qs = qs.filter(updated__gte=timezone.now() - timedelta(days=age_days))
    if status == "live":
        qs = qs.filter(removed_at__isnull=True)
    elif status == "removed":
        qs = qs.filter(removed_at__isnull=False)
    elif status != "all":
        raise engine.InvalidArgument("status must be live, removed or all", field="status")
    return qs.order_by("-updated", "-id")


def get_page(*, agent_id: str, page_id: Any) -> WikiPage:
    """One of the agent's pages; another agent's id is not_found like an unknown one."""
    try:
        pk = int(page_id)
    except (TypeError, ValueError):
        raise engine.NotFound("no wiki page with that id", field="page_id") from None
    page = WikiPage.objects.filter(agent_id=agent_id, pk=pk).first()
    if page is None:
        raise engine.NotFound("no wiki page with that id", field="page_id")
    return page


# --- W4: ranking ---------------------------------------------------------------------------------------------

FIELD_WEIGHTS = (("t", 1.0), ("g", 0.8), ("s", 0.7), ("", 0.4))  # title, tags, summary, original text
MAX_UNIT_TERMS = 16


@dataclass(frozen=True)
class WikiHit:
    page: WikiPage
    score: float
    relevance: float
    factor: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.page.path,
            "title": self.page.title,
            "doc_type": self.page.doc_type,
            "summary": self.page.summary,
            "trust": float(self.page.trust),
            "source_type": self.page.source_type,
            "score": round(self.score, 6),
            "relevance": round(self.relevance, 6),
            "pointer_id": self.page.pointer_id,
            "updated": self.page.updated.isoformat().replace("+00:00", "Z"),
        }


def _unit_relevance(unit: list[str]) -> Any:
    """SQL: the best field weight × the share of the unit's terms found in that field (a word: 0 or 1; a CJK
    run: the share of its bigrams)."""
    terms = list(dict.fromkeys(unit))[:MAX_UNIT_TERMS]
    per_field = []
    for prefix, weight in FIELD_WEIGHTS:
        found = [
            Case(
                When(search_body__contains=f" {term} ", then=Value(1.0))
                if not prefix
                else When(search_head__contains=f" {prefix}:{term} ", then=Value(1.0)),
                default=Value(0.0),
            )
            for term in terms
        ]
        share = found[0] if len(found) == 1 else sum(found[1:], found[0])
        per_field.append(ExpressionWrapper(share * Value(weight / len(terms)), output_field=FloatField()))
    return Greatest(*per_field)


def _relevance_expr(units: list[list[str]]) -> Any:
    """SQL: relevance in [0, 1], the mean over the query's terms of their best weighted field match (title 1.0,
    tags 0.8, summary 0.7, original text 0.4)."""
    parts = [_unit_relevance(u) for u in units]
    total = parts[0] if len(parts) == 1 else sum(parts[1:], parts[0])
    return ExpressionWrapper(total / Value(float(len(units))), output_field=FloatField())


def _factor_expr() -> Any:
    return Case(
        *[When(source_type=name, then=Value(f)) for name, f in SOURCE_TYPES.items()],
        default=Value(SOURCE_TYPES["unknown"]),
        output_field=FloatField(),
    )


def rank_score(rel: float, trust: float, source_type: str) -> float:
    """SPEC W4: relevance · (0.5 + trust) · factor(source_type)."""
    return rel * (0.5 + trust) * SOURCE_TYPES.get(source_type, SOURCE_TYPES["unknown"])


def search(*, agent_id: str, query: str, limit: int = 10) -> list[WikiHit]:
    """The agent's live pages ranked by SPEC W4, best first, computed in one SQL statement over the pages'
    search documents. Pages whose pointer row is not current (quarantined by the burst guard, retracted by an
    origin purge, removed) are left out."""
    agent_id = engine.check_agent_id(agent_id)
    if not isinstance(query, str):
        raise engine.InvalidArgument("query must be a string", field="query")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise engine.InvalidArgument("limit must be between 1 and 100", field="limit")
    units = engine.query_units(query)
    if not units:
        return []
    pointer = Memory.objects.filter(
        agent_id=OuterRef("agent_id"), subject=OuterRef("pointer_subject"), predicate=POINTER_PREDICATE
    ).filter(engine.belief_current_q())
    trust = Cast("trust", FloatField())
    rows = (
        WikiPage.objects.filter(agent_id=agent_id, removed_at__isnull=True)
        .filter(Exists(pointer))
        .annotate(rel=_relevance_expr(units), factor=_factor_expr())
        .filter(rel__gt=0)
        .annotate(
            score=ExpressionWrapper(F("rel") * (Value(0.5) + trust) * F("factor"), output_field=FloatField())
        )
        .defer("search_head", "search_body")
        .order_by("-score", "-updated", "id")[:limit]
    )
    return [WikiHit(p, float(p.score), float(p.rel), float(p.factor)) for p in rows]


# --- markdown layout (wiki_export / wiki_import) -----------------------------------------------------------


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).isoformat().replace("+00:00", "Z")


class _Trust(float):
    """A float YAML writes with exactly three decimals (``trust: 0.300``)."""


def _trust_representer(dumper: yaml.SafeDumper, value: _Trust) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:float", f"{value:.3f}")


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Trust, _trust_representer)


def frontmatter(page: WikiPage) -> dict[str, Any]:
    return {
        "title": page.title,
        "created": _iso(page.created),
        "updated": _iso(page.updated),
        "tags": list(page.tags or []),
        "author": page.author,
        "trust": _Trust(float(page.trust)),
        "source_type": page.source_type,
        "last_verified": _iso(page.last_verified),
    }


def page_markdown(page: WikiPage) -> str:
    """The page as the source engine lays it out: YAML frontmatter, then ``## Summary``, ``## Original text``
    and ``## Revision log`` (one line per revision, newest last)."""
    head = yaml.dump(
        frontmatter(page),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=None,
        width=1000,
    )
    log = []
    for rev in page.revisions.order_by("number"):
        mark = " (accepted)" if rev.accepted else ""
        reason = " ".join((rev.reason or "").split())
        line = f"- r{rev.number} {_iso(rev.created_at)} {rev.actor}{mark}"
        log.append(f"{line}: {reason}" if reason else line)
    if not log:
        log.append(f"- r0 {_iso(page.created)} {page.author}: imported")
    return (
        f"---\n{head}---\n\n## Summary\n\n{page.summary}\n\n## Original text\n\n{page.original_text}\n\n"
        "## Revision log\n\n" + "\n".join(log) + "\n"
    )


# --- wiki_export / wiki_import --------------------------------------------------------------------------------

FRONTMATTER_KEYS = ("title", "created", "updated", "tags", "author", "trust", "source_type", "last_verified")
SUMMARY_HEAD = "## Summary\n\n"
TEXT_HEAD = "\n\n## Original text\n\n"
LOG_HEAD = "\n\n## Revision log\n\n"
IMPORT_ACTOR = "system:wiki_import"


def export_relpath(page: WikiPage) -> str:
    """Where ``wiki_export`` puts a page: ``<namespace>/<doc_type>/<slug>.md``."""
    return f"{page.path}.md"


@dataclass(frozen=True)
class ParsedPage:
    """One ``<namespace>/<doc_type>/<slug>.md`` file, validated."""

    relpath: str
    namespace: str
    doc_type: str
    slug: str
    title: str
    created: datetime
    updated: datetime
    tags: list[str]
    author: str
    trust: Decimal
    source_type: str
    last_verified: datetime | None
    summary: str
    original_text: str

    @property
    def subject(self) -> str:
        return pointer_subject(self.doc_type, self.slug)


def _bad(relpath: str, message: str) -> InvalidWikiFile:
    return InvalidWikiFile(f"{relpath}: {message}", field="file", file=relpath)


def _file_time(relpath: str, data: dict[str, Any], key: str, *, required: bool) -> datetime | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if isinstance(value, datetime):
        value = value.isoformat()
    try:
        parsed = engine.parse_time(value, field=key)
    except engine.EngineError as exc:
        raise _bad(relpath, f"{key}: {exc.message}") from None
    if parsed is None:
        raise _bad(relpath, f"{key} is required")
    return parsed


def parse_page_file(relpath: str, raw: bytes) -> ParsedPage:
    """Validate one exported page file (path parts, YAML frontmatter, the three sections); raise
    ``invalid_wiki_file`` naming the file and the problem."""
    parts = relpath.split("/")
    if len(parts) != 3 or not parts[2].endswith(".md"):
        raise _bad(relpath, "expected <namespace>/<doc_type>/<slug>.md")
    namespace, doc, slug = parts[0], parts[1], parts[2][:-3]
    if namespace not in NAMESPACES:
        raise _bad(relpath, "the namespace folder must be auto or curated")
    if doc not in DOC_TYPES:
        raise _bad(relpath, f"the doc type folder must be one of {', '.join(DOC_TYPES)}")
    if not SLUG_RE.fullmatch(slug):
        raise _bad(relpath, "the file name is not a valid slug (^[a-z0-9][a-z0-9-]{0,63}$)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(relpath, "not UTF-8 text") from None
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n") or "\n---\n" not in text[3:]:
        raise _bad(relpath, "no YAML frontmatter (--- … ---) at the top")
    head, body = text[4:].split("\n---\n", 1)
    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        raise _bad(relpath, f"the frontmatter is not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise _bad(relpath, "the frontmatter must be a mapping")
    missing = [k for k in FRONTMATTER_KEYS if k not in data]
    if missing:
        raise _bad(relpath, f"frontmatter is missing {', '.join(missing)}")
    unknown = sorted(set(map(str, data)) - set(FRONTMATTER_KEYS))
    if unknown:
        raise _bad(relpath, f"unknown frontmatter keys: {', '.join(unknown)}")
    try:
        title = _check_title(data["title"] if isinstance(data["title"], str) else None)
        tags = engine.check_tags(data["tags"])
    except engine.EngineError as exc:
        raise _bad(relpath, exc.message) from None
    author = data["author"]
    if not isinstance(author, str) or not author.strip() or len(author) > 128:
        raise _bad(relpath, "author must be a short string")
    trust_value = data["trust"]
    if isinstance(trust_value, bool) or not isinstance(trust_value, int | float) or not 0 <= trust_value <= 1:
        raise _bad(relpath, "trust must be a number between 0 and 1")
    trust = Decimal(f"{float(trust_value):.3f}")
    source_type = data["source_type"]
    if source_type not in SOURCE_TYPES:
        raise _bad(relpath, f"source_type must be one of {', '.join(SOURCE_TYPES)}")
    if namespace == "auto" and (trust != AUTO_TRUST or source_type != AUTO_SOURCE_TYPE):
        raise _bad(relpath, "an auto page has trust 0.300 and source_type raw_dialogue")
    created = _file_time(relpath, data, "created", required=True)
    updated = _file_time(relpath, data, "updated", required=True)
    last_verified = _file_time(relpath, data, "last_verified", required=False)
    body = body.lstrip("\n")
    if not body.startswith(SUMMARY_HEAD) or TEXT_HEAD not in body or LOG_HEAD not in body:
        raise _bad(relpath, "the body needs the sections ## Summary, ## Original text and ## Revision log")
    rest = body[len(SUMMARY_HEAD) :]
    summary_part, rest = rest.split(TEXT_HEAD, 1)
    text_part = rest[: rest.rindex(LOG_HEAD)] if LOG_HEAD in rest else ""
    try:
        summary = _check_body(summary_part, field="summary", limit=MAX_SUMMARY_BYTES)
        original = _check_body(text_part, field="original_text", limit=MAX_TEXT_BYTES)
    except engine.EngineError as exc:
        raise _bad(relpath, exc.message) from None
    assert created is not None and updated is not None
    return ParsedPage(
        relpath=relpath,
        namespace=namespace,
        doc_type=doc,
        slug=slug,
        title=title,
        created=created,
        updated=updated,
        tags=tags,
        author=author.strip(),
        trust=trust,
        source_type=source_type,
        last_verified=last_verified,
        summary=summary,
        original_text=original,
    )


@dataclass(frozen=True)
class ImportReport:
    created: list[str]
    updated: list[str]
    unchanged: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"created": self.created, "updated": self.updated, "unchanged": self.unchanged}


def _page_values(p: ParsedPage) -> dict[str, Any]:
    return {
        "namespace": p.namespace,
        "title": p.title,
        "tags": p.tags,
        "author": p.author,
        "trust": p.trust,
        "source_type": p.source_type,
        "created": p.created,
        "updated": p.updated,
        "last_verified": p.last_verified,
        "summary": p.summary,
        "original_text": p.original_text,
    }


def _pointer_matches(page: WikiPage) -> bool:
    row = current_pointer(page)
    return (
        row is not None
        and row.object == page.path
        and row.content == pointer_content(page)
        and abs(row.origin_trust - float(page.trust)) < 1e-9
    )


def import_pages(*, agent_id: str, pages: list[ParsedPage], actor: str = IMPORT_ACTOR) -> ImportReport:
    """Create or update the agent's pages from parsed files, all or nothing; a page already as in its file is
    left alone, so importing the same folder twice changes nothing. Files are scanned for prompt injection."""
    agent_id = engine.check_agent_id(agent_id)
    actor = engine.check_actor(actor)
    seen: dict[str, str] = {}
    for p in pages:
        if p.subject in seen:
            raise _bad(p.relpath, f"the same page as {seen[p.subject]} (one page per doc type and slug)")
        seen[p.subject] = p.relpath
        result = engine.scan_injection("\n".join((p.title, p.summary, p.original_text)))
        if result.blocked:
            raise _bad(p.relpath, "matches prompt-injection rules (" + ", ".join(result.rules) + ")")
    return _import(agent_id=agent_id, pages=pages, actor=actor)


@engine.write_transaction
def _import(*, agent_id: str, pages: list[ParsedPage], actor: str) -> ImportReport:
    created: list[str] = []
    updated: list[str] = []
    unchanged: list[str] = []
    t = timezone.now()
    for p in sorted(pages, key=lambda x: x.relpath):
        values = _page_values(p)
        page = (
            WikiPage.objects.select_for_update().filter(agent_id=agent_id, pointer_subject=p.subject).first()
        )
        if page is None:
            page = WikiPage.objects.create(
                agent_id=agent_id, doc_type=p.doc_type, slug=p.slug, pointer_subject=p.subject, **values
            )
            bucket = created
        else:
            same = all(getattr(page, k) == v for k, v in values.items()) and not page.removed
            if same and _pointer_matches(page):
                unchanged.append(p.relpath)
                continue
            for k, v in values.items():
                setattr(page, k, v)
            page.removed_at, page.removed_reason = None, ""
            page.save()
            bucket = updated
        last = latest_revision(page)
        if last is None or not _same_content(last, p.title, p.summary, p.original_text, p.tags):
            _add_revision(
                page,
                title=p.title,
                summary=p.summary,
                text=p.original_text,
                tags=p.tags,
                actor=actor,
                reason=f"imported from {p.relpath}",
                at=t,
                accepted=p.namespace == "curated",
            )
        if not _pointer_matches(page):
            _repoint(page, actor=actor, curated=page.namespace == "curated")
        bucket.append(p.relpath)
    if created or updated:
        _audit(
            agent_id=agent_id,
            actor=actor,
            action="wiki_import",
            reason=f"{len(created)} created, {len(updated)} updated, {len(unchanged)} unchanged",
            created=created,
            updated=updated,
        )
    return ImportReport(created, updated, unchanged)
