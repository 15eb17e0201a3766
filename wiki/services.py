"""Wiki writes (SPEC W1–W3, W5): publish auto pages, revise, promote, remove, restore, and their validation and pointer
rows. Reads and search live in ``wiki.selectors``, the markdown file format and import in ``wiki.io``.

Pages and revisions are wiki rows and are written here (and by ``wiki.io.import_pages``, with these
helpers); memory rows (the pointer row, audit events) are only ever written by ``memory.engine`` functions
called from here.

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

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.db.models import Max
from django.utils import timezone
from django.utils.text import slugify

from memory import engine

from .models import DOC_TYPES, POINTER_PREDICATE, WikiPage, WikiRevision
from .selectors import current_pointer, latest_revision
from .selectors import search as search  # SPEC 11: importable from here; it lives in wiki.selectors

AUTO_AUTHOR = "auto-distill"
AUTO_TRUST = Decimal("0.300")
AUTO_SOURCE_TYPE = "raw_dialogue"
CURATED_TRUST = Decimal("0.800")
CURATED_SOURCE_TYPE = "user_statement"
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


class PageNotRemoved(engine.EngineError):
    code = "page_not_removed"


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


def check_title(title: Any) -> str:
    """A page title: one line, at most MAX_TITLE characters."""
    value = engine.check_text(title, field="title", required=True, limit=MAX_TITLE)
    assert value is not None
    if any(ord(ch) < 32 for ch in value):
        raise engine.InvalidArgument("title must be one line", field="title")
    return value


def check_body(value: Any, *, field: str, limit: int) -> str:
    """A summary or original text: non-empty, at most ``limit`` UTF-8 bytes, line ends normalised."""
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


def audit(
    *,
    agent_id: str,
    actor: str,
    action: str,
    subject: str | None = None,
    memory_id: str | None = None,
    reason: str = "",
    **details: Any,
) -> int:
    """One audit event through the engine's public ``audit_record``; extra keywords become its details."""
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
    audit(
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


def repoint(page: WikiPage, *, actor: str, curated: bool) -> engine.StoreResult:
    """A new pointer value for an existing page (its title, path or trust changed), remembered on the page."""
    stored = _write_pointer(page, actor=actor, curated=curated, protect=False)
    page.pointer_id = stored.id
    page.save(update_fields=["pointer_id"])
    return stored


# --- revisions ----------------------------------------------------------------------------------------------


def add_revision(
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
    """The page's next revision (numbered after the highest so far)."""
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


def same_content(
    page_or_rev: WikiPage | WikiRevision, title: str, summary: str, text: str, tags: list[str]
) -> bool:
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
    title = check_title(title)
    summary = check_body(summary, field="summary", limit=MAX_SUMMARY_BYTES)
    text = check_body(original_text, field="original_text", limit=MAX_TEXT_BYTES)
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
        rev = add_revision(
            page, title=title, summary=summary, text=text, tags=tags, actor=actor, reason="published", at=t
        )
        outcome = "created"
    elif page.namespace == "curated" and not page.removed:
        last = latest_revision(page)
        if last is not None and same_content(last, title, summary, text, tags):
            return PublishResult(page, last.number, "unchanged", page.pointer_id)
        _check_daily_revisions(agent_id, t)
        rev = add_revision(
            page, title=title, summary=summary, text=text, tags=tags, actor=actor, reason="republished", at=t
        )
        audit(
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
        if not page.removed and last is not None and same_content(page, title, summary, text, tags):
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
        rev = add_revision(
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
    audit(
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
    new_title = page.title if title is None else check_title(title)
    new_summary = (
        page.summary if summary is None else check_body(summary, field="summary", limit=MAX_SUMMARY_BYTES)
    )
    new_text = (
        page.original_text
        if original_text is None
        else check_body(original_text, field="original_text", limit=MAX_TEXT_BYTES)
    )
    new_tags = list(page.tags or []) if tags is None else engine.check_tags(tags)
    last = latest_revision(page)
    if (
        last is not None
        and same_content(last, new_title, new_summary, new_text, new_tags)
        and same_content(page, new_title, new_summary, new_text, new_tags)
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
    rev = add_revision(
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
        repoint(page, actor=actor, curated=curated)
    audit(
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
    if last is not None and not same_content(last, page.title, page.summary, page.original_text, page.tags):
        last = None
    if last is None:  # e.g. an imported page without revisions: the promoted text becomes a revision
        last = add_revision(
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
    stored = repoint(page, actor=actor, curated=True)
    audit(
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
    audit(
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


@engine.write_transaction
def restore(*, page: WikiPage, actor: str, reason: str = "") -> WikiPage:
    """Bring a removed page back as it was when it was removed (issue 19 item 3): same namespace, text and
    trust, and a new pointer row (the removed one stays expired in the key's history), so agents find it
    again. Audited as ``wiki_restore``; a page that is not removed is refused (``page_not_removed``)."""
    page = _check_page(page)
    actor = engine.check_actor(actor)
    reason = reason.strip() if isinstance(reason, str) else ""
    if len(reason) > MAX_REASON:
        raise engine.InvalidArgument(f"reason is longer than {MAX_REASON} characters", field="reason")
    if not page.removed:
        raise PageNotRemoved("this page is not removed: there is nothing to restore", field="page")
    removed_at, removed_reason = page.removed_at, page.removed_reason
    t = timezone.now()
    page.removed_at, page.removed_reason, page.updated = None, "", t
    page.save(update_fields=["removed_at", "removed_reason", "updated"])
    stored = repoint(page, actor=actor, curated=page.namespace == "curated")
    if stored.outcome == "dropped":  # agents could not find it again: nothing is restored
        raise InjectionBlocked("the page's pointer row was dropped: " + (stored.reason or ""))
    audit(
        agent_id=page.agent_id,
        actor=actor,
        action="wiki_restore",
        subject=page.pointer_subject,
        memory_id=stored.id,
        reason=reason or "restored a removed page",
        path=page.path,
        removed_at=removed_at.isoformat() if removed_at else None,
        removed_reason=removed_reason,
        pointer_outcome=stored.outcome,
    )
    return page
