"""The wiki's file format (``wiki_export`` / ``wiki_import``): a page is ``<namespace>/<doc_type>/<slug>.md``,
YAML frontmatter then ``## Summary``, ``## Original text`` and ``## Revision log``, as the source engine lays
it out.

``parse_page_file`` validates one file; ``import_pages`` writes the parsed pages all or nothing, through the
same validation, revision and pointer helpers as ``wiki.services``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import yaml
from django.utils import timezone

from memory import engine

from .models import DOC_TYPES, NAMESPACES, SOURCE_TYPES, WikiPage
from .selectors import current_pointer, latest_revision
from .services import (
    AUTO_SOURCE_TYPE,
    AUTO_TRUST,
    MAX_SUMMARY_BYTES,
    MAX_TEXT_BYTES,
    SLUG_RE,
    InvalidWikiFile,
    add_revision,
    audit,
    check_body,
    check_title,
    pointer_content,
    pointer_subject,
    repoint,
    same_content,
)

# --- markdown layout ---------------------------------------------------------------------------------------


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


# --- wiki_export / wiki_import ---------------------------------------------------------------------------

MAX_FRONTMATTER_CHARS = 16 * 1024
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
    if len(head) > MAX_FRONTMATTER_CHARS:
        raise _bad(relpath, f"the frontmatter is longer than {MAX_FRONTMATTER_CHARS} characters")
    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        raise _bad(relpath, f"the frontmatter is not valid YAML ({str(exc).splitlines()[0]})") from None
    except RecursionError:  # e.g. 50,000 nested lists: the loader recurses once per level
        raise _bad(relpath, "the frontmatter nests too deeply") from None
    if not isinstance(data, dict):
        raise _bad(relpath, "the frontmatter must be a mapping")
    missing = [k for k in FRONTMATTER_KEYS if k not in data]
    if missing:
        raise _bad(relpath, f"frontmatter is missing {', '.join(missing)}")
    unknown = sorted(set(map(str, data)) - set(FRONTMATTER_KEYS))
    if unknown:
        raise _bad(relpath, f"unknown frontmatter keys: {', '.join(unknown)}")
    try:
        title = check_title(data["title"] if isinstance(data["title"], str) else None)
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
        summary = check_body(summary_part, field="summary", limit=MAX_SUMMARY_BYTES)
        original = check_body(text_part, field="original_text", limit=MAX_TEXT_BYTES)
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


def as_auto(p: ParsedPage) -> ParsedPage:
    """A page read from a file as an auto page: trust 0.300, raw_dialogue, whatever the file claimed."""
    if p.namespace == "auto":
        return p
    return replace(p, namespace="auto", trust=AUTO_TRUST, source_type=AUTO_SOURCE_TYPE)


def import_pages(
    *, agent_id: str, pages: list[ParsedPage], actor: str = IMPORT_ACTOR, trust_curated: bool = False
) -> ImportReport:
    """Create or update the agent's pages from parsed files, all or nothing; a page already as in its file is
    left alone, so importing the same folder twice changes nothing. Files are scanned for prompt injection.

    A file under ``curated/`` is imported as an auto page (trust 0.300, waiting for a curator's promotion)
    unless ``trust_curated``: an admin's explicit word that the files' curation is to be believed."""
    agent_id = engine.check_agent_id(agent_id)
    actor = engine.check_actor(actor)
    if not trust_curated:
        pages = [as_auto(p) for p in pages]
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
        if last is None or not same_content(last, p.title, p.summary, p.original_text, p.tags):
            add_revision(
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
            repoint(page, actor=actor, curated=page.namespace == "curated")
        bucket.append(p.relpath)
    if created or updated:
        audit(
            agent_id=agent_id,
            actor=actor,
            action="wiki_import",
            reason=f"{len(created)} created, {len(updated)} updated, {len(unchanged)} unchanged",
            created=created,
            updated=updated,
        )
    return ImportReport(created, updated, unchanged)
