"""Wiki reads (SPEC W4, D5): the agent's pages, one page, its revisions and diff, its pointer row, and search.

Search ranks in one SQL statement over the pages' search documents (``WikiPage.search_head`` and
``search_body``): relevance · (0.5 + trust) · factor(source_type), so a curated page comes before an equally
relevant auto page.
Nothing here writes; ``wiki.services`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import Case, Exists, ExpressionWrapper, F, FloatField, OuterRef, QuerySet, Value, When
from django.db.models.functions import Cast, Greatest
from django.utils import timezone

from memory import engine
from memory.models import Memory

from . import diff
from .models import DOC_TYPES, NAMESPACES, POINTER_PREDICATE, SOURCE_TYPES, WikiPage, WikiRevision

# --- pages -------------------------------------------------------------------------------------------------


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


# --- pointer row and revisions ------------------------------------------------------------------------------


def current_pointer(page: WikiPage) -> Memory | None:
    """The page's current, believed pointer row (None when removed, quarantined or retracted)."""
    return (
        Memory.objects.filter(
            agent_id=page.agent_id, subject=page.pointer_subject, predicate=POINTER_PREDICATE
        )
        .filter(engine.belief_current_q())
        .first()
    )


def latest_revision(page: WikiPage) -> WikiRevision | None:
    return page.revisions.order_by("-number").first()


def accepted_revision(page: WikiPage) -> WikiRevision | None:
    return page.revisions.filter(accepted=True).order_by("-number").first()


def diff_since_accepted(*, page: WikiPage) -> list[str]:
    """Unified-diff lines from the last accepted revision (the first one, when none is) to the latest revision
    (``wiki.diff.since_accepted``)."""
    return diff.since_accepted(list(page.revisions.all()))
