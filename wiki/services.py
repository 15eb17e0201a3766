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
from django.db.models import Max, QuerySet
from django.utils.text import slugify

from memory import engine
from memory.engine import common as c
from memory.engine import text as fts_text
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
MAX_TITLE = 300
MAX_SUMMARY_BYTES = 8 * 1024
MAX_TEXT_BYTES = c.MAX_CONTENT_BYTES  # 64 KB
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
    value = c.check_text(title, field="title", required=True, limit=MAX_TITLE)
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
    if not isinstance(page, WikiPage) or page.pk is None:
        raise engine.InvalidArgument("page must be a saved wiki page", field="page")
    fresh = WikiPage.objects.filter(pk=page.pk).first()
    if fresh is None:
        raise engine.NotFound("no wiki page with that id", field="page")
    return fresh


def _scan(*, agent_id: str, actor: str, subject: str, title: str, summary: str, text: str) -> None:
    """The shared injection rules over title, summary and text together; blocked → audited and refused."""
    result = engine.scan_injection("\n".join((title, summary, text)))
    if not result.blocked:
        return
    c.audit(
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


def current_pointer(page: WikiPage) -> Memory | None:
    """The page's current, believed pointer row (None when removed, quarantined or retracted)."""
    return (
        Memory.objects.filter(
            agent_id=page.agent_id, subject=page.pointer_subject, predicate=POINTER_PREDICATE
        )
        .filter(c.current_q(c.now()))
        .first()
    )


def _pointed_subjects(agent_id: str) -> set[str]:
    return set(
        Memory.objects.filter(
            agent_id=agent_id, predicate=POINTER_PREDICATE, subject__startswith="wiki:auto/"
        )
        .filter(c.current_q(c.now()))
        .values_list("subject", flat=True)
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
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    doc = normalise_doc_type(doc_type)
    title = _check_title(title)
    summary = _check_body(summary, field="summary", limit=MAX_SUMMARY_BYTES)
    text = _check_body(original_text, field="original_text", limit=MAX_TEXT_BYTES)
    tag_list = c.check_tags(tags)
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


@c.write_transaction
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
    c.lock_key(agent_id, "wiki:pages", "publish")  # serialise one agent's publishers (the daily count)
    t = c.now()
    page = WikiPage.objects.filter(agent_id=agent_id, pointer_subject=subject).first()
    if page is None:
        made_today = WikiPage.objects.filter(agent_id=agent_id, created__gte=_utc_midnight(t)).count()
        if made_today >= DAILY_AUTO_PAGES:
            raise engine.RateLimited(
                f"at most {DAILY_AUTO_PAGES} new auto pages per agent per UTC day; republishing an existing "
                "slug is still possible",
                limit=DAILY_AUTO_PAGES,
            )
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
        rev = _add_revision(
            page, title=title, summary=summary, text=text, tags=tags, actor=actor, reason="republished", at=t
        )
        c.audit(
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
        reason = "republished after removal" if page.removed else "republished"
        page.title, page.summary, page.original_text, page.tags, page.updated = title, summary, text, tags, t
        page.removed_at, page.removed_reason = None, ""
        page.save()
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
    c.audit(
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


@c.write_transaction
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
    actor = c.check_actor(actor)
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
    new_tags = list(page.tags or []) if tags is None else c.check_tags(tags)
    last = latest_revision(page)
    if (
        last is not None
        and _same_content(last, new_title, new_summary, new_text, new_tags)
        and _same_content(page, new_title, new_summary, new_text, new_tags)
    ):
        raise engine.InvalidArgument("nothing changed", field="original_text")
    t = c.now()
    title_changed = new_title != page.title
    page.title, page.summary, page.original_text, page.tags, page.updated = (
        new_title,
        new_summary,
        new_text,
        new_tags,
        t,
    )
    curated = page.namespace == "curated"
    if curated:
        page.last_verified = t
    page.save()
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
        stored = _write_pointer(page, actor=actor, curated=curated, protect=False)
        page.pointer_id = stored.id
        page.save(update_fields=["pointer_id"])
    c.audit(
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


@c.write_transaction
def promote(*, page: WikiPage, actor: str, reason: str) -> WikiPage:
    """A curator's promotion (SPEC W5): ``curated/<doc_type>/<slug>``, trust 0.800, ``user_statement``, the
    latest revision accepted, and a new pointer value at trust 0.8 (the auto one is superseded, not copied)."""
    page = _check_page(page)
    actor = c.check_actor(actor)
    reason = _check_reason(reason)
    if page.removed:
        raise PageRemoved("this page was removed; it cannot be promoted", field="page")
    if page.namespace == "curated":
        raise AlreadyCurated("this page is already curated", field="page")
    if WikiPage.objects.filter(
        agent_id=page.agent_id, namespace="curated", doc_type=page.doc_type, slug=page.slug
    ).exists():
        raise PathTaken(f"curated/{page.doc_type}/{page.slug} is another page already", field="page")
    t = c.now()
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
    page.save()
    stored = _write_pointer(page, actor=actor, curated=True, protect=False)
    page.pointer_id = stored.id
    page.save(update_fields=["pointer_id"])
    c.audit(
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


@c.write_transaction
def remove(*, page: WikiPage, actor: str, reason: str) -> WikiPage:
    """End the page's pointer with ``expire_by_subject(wiki:auto/…, "auto_page_removed")`` (never an origin
    purge: the agent's other channel memories stay) and mark the page removed; its revisions stay."""
    page = _check_page(page)
    actor = c.check_actor(actor)
    reason = _check_reason(reason)
    if page.removed:
        raise PageRemoved("this page was removed already", field="page")
    expired = engine.expire_by_subject(
        agent_id=page.agent_id, subject=page.pointer_subject, reason=REMOVED_EVENT, actor=actor
    )
    t = c.now()
    page.removed_at, page.removed_reason, page.updated = t, reason, t
    page.save(update_fields=["removed_at", "removed_reason", "updated"])
    c.audit(
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
        qs = qs.filter(updated__gte=c.now() - timedelta(days=age_days))
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

FIELD_WEIGHTS = (("title", 1.0), ("tags", 0.8), ("summary", 0.7), ("original_text", 0.4))


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


def _units(text: str) -> tuple[set[str], set[str]]:
    """(words, CJK bigrams) of a text, normalised like the memory FTS index (NFKC, lower case, CJK bigrams)."""
    words: set[str] = set()
    grams: set[str] = set()
    for unit in fts_text.tokens(text):
        if len(unit) == 1 and not fts_text.CJK_RUN.fullmatch(unit[0]):
            words.add(unit[0])
        else:
            grams.update(unit)
    return words, grams


def _unit_match(unit: list[str], words: set[str], grams: set[str]) -> float:
    """1 for a word present; for a CJK run, the share of its bigrams present (a run of one char needs a word)."""
    if len(unit) == 1 and not fts_text.CJK_RUN.fullmatch(unit[0]):
        return 1.0 if unit[0] in words else 0.0
    if len(unit) == 1:  # a single CJK character: present in any bigram
        return 1.0 if any(unit[0] in g for g in grams) else 0.0
    return sum(1 for g in unit if g in grams) / len(unit)


def relevance(query_units: list[list[str]], page: WikiPage) -> float:
    """How well the page matches the query, in [0, 1]: per query term the best field weight it occurs in
    (title 1.0, tags 0.8, summary 0.7, text 0.4), averaged over the query's terms."""
    if not query_units:
        return 0.0
    fields = []
    for name, weight in FIELD_WEIGHTS:
        value = " ".join(page.tags or []) if name == "tags" else getattr(page, name)
        fields.append((weight, *_units(value or "")))
    total = 0.0
    for unit in query_units:
        total += max(weight * _unit_match(unit, words, grams) for weight, words, grams in fields)
    return total / len(query_units)


def rank_score(rel: float, trust: float, source_type: str) -> float:
    """SPEC W4: relevance · (0.5 + trust) · factor(source_type)."""
    return rel * (0.5 + trust) * SOURCE_TYPES.get(source_type, SOURCE_TYPES["unknown"])


def search(*, agent_id: str, query: str, limit: int = 10) -> list[WikiHit]:
    """The agent's live pages ranked by SPEC W4. Pages whose pointer row is not current (quarantined by the
    burst guard, retracted, removed) are left out."""
    agent_id = c.check_agent_id(agent_id)
    if not isinstance(query, str):
        raise engine.InvalidArgument("query must be a string", field="query")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise engine.InvalidArgument("limit must be between 1 and 100", field="limit")
    units = fts_text._query_units(query)
    if not units:
        return []
    pointed = _pointed_subjects(agent_id)
    hits: list[WikiHit] = []
    for page in WikiPage.objects.filter(agent_id=agent_id, removed_at__isnull=True):
        if page.pointer_subject not in pointed:
            continue
        rel = relevance(units, page)
        if rel <= 0:
            continue
        factor = SOURCE_TYPES.get(page.source_type, SOURCE_TYPES["unknown"])
        hits.append(WikiHit(page, rank_score(rel, float(page.trust), page.source_type), rel, factor))
    hits.sort(key=lambda h: (-h.score, -h.page.updated.timestamp(), h.page.pk))
    return hits[:limit]


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
        log.append(f"- r{rev.number} {_iso(rev.created_at)} {rev.actor}{mark}: {reason}".rstrip(": "))
    if not log:
        log.append(f"- r0 {_iso(page.created)} {page.author}: imported")
    return (
        f"---\n{head}---\n\n## Summary\n\n{page.summary}\n\n## Original text\n\n{page.original_text}\n\n"
        "## Revision log\n\n" + "\n".join(log) + "\n"
    )
