"""The wiki's part of an erasure (SPEC M5): pages that quote what is erased go, with their revisions; the
engine erases their pointer rows. Registered with the engine when the app starts (``WikiConfig.ready``)."""

from __future__ import annotations

from django.db.models import Q

from memory.engine import ErasurePart, ErasureScope

from .models import WikiPage, WikiRevision


def erase_pages(scope: ErasureScope) -> ErasurePart:
    pages = WikiPage.objects.filter(agent_id=scope.agent_id)
    direct = Q(pointer_id__in=sorted(scope.memory_ids))
    if scope.subject:
        direct |= Q(pointer_subject=scope.subject)
    doomed: dict[int, str] = dict(pages.filter(direct).values_list("id", "pointer_subject"))
    for pid, subject, title, summary, text in pages.values_list(
        "id", "pointer_subject", "title", "summary", "original_text"
    ).iterator(chunk_size=500):
        if pid not in doomed and scope.quotes(title, summary, text):
            doomed[pid] = subject
    revisions = WikiRevision.objects.filter(page__agent_id=scope.agent_id).exclude(page_id__in=list(doomed))
    for pid, subject, title, summary, text in revisions.values_list(
        "page_id", "page__pointer_subject", "title", "summary", "original_text"
    ).iterator(chunk_size=500):
        if pid not in doomed and scope.quotes(title, summary, text):
            doomed[pid] = subject
    deleted = 0
    if doomed:
        deleted = WikiPage.objects.filter(id__in=list(doomed)).count()
        WikiPage.objects.filter(id__in=list(doomed)).delete()
    return ErasurePart(deleted, tuple(sorted(set(doomed.values()))))
