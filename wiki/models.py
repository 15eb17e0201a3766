"""Wiki pages (SPEC W1–W5): long-lived documents distilled from conversations, with their revisions.

The full text of a page lives here only; memory holds one pointer row per page (``pointer_id``), written by the
engine (``wiki.services`` calls ``memory.engine``).
"""

from __future__ import annotations

from django.db import models

from memory import engine

NAMESPACES = ("auto", "curated")
DOC_TYPES = ("charter", "sop", "spec", "policy", "reference")
# SPEC W4 ranking factor per source_type
SOURCE_TYPES = {
    "verified_fact": 1.2,
    "user_statement": 1.0,
    "tool_output": 0.9,
    "unknown": 0.8,
    "raw_dialogue": 0.6,
}

# The predicate of a page's pointer row in memory (SPEC W3); its subject is WikiPage.pointer_subject.
POINTER_PREDICATE = "documented_in"

# Field prefixes of the search document (SPEC W4 relevance weights live in wiki.selectors).
SEARCH_FIELDS = (("t", "title"), ("g", "tags"), ("s", "summary"), ("", "original_text"))


def field_terms(text: str) -> set[str]:
    """The searchable terms of a text, normalised like the memory FTS index (NFKC, lower case): its words, and
    for CJK runs their bigrams and single characters (so any one- or two-character substring is found)."""
    terms: set[str] = set()
    for unit in engine.text_units(text):
        terms.update(unit)
        if len(unit) > 1 or engine.is_cjk_run(unit[0]):
            terms.update(ch for gram in unit for ch in gram)
    return terms


def search_documents(page: WikiPage) -> tuple[str, str]:
    """(head, body): the head is `` t:deploy t:runbook g:ops s:… `` (the title's, tags' and summary's unique
    terms with the field's prefix), the body the original text's unique terms `` announce canary … ``, so one
    ``LIKE '% t:deploy %'`` or ``LIKE '% canary %'`` tells whether a field has a term."""
    head: list[str] = []
    for prefix, name in SEARCH_FIELDS[:3]:
        value = " ".join(page.tags or []) if name == "tags" else getattr(page, name) or ""
        head.extend(f"{prefix}:{term}" for term in sorted(field_terms(value)))
    body = sorted(field_terms(page.original_text or ""))
    return " " + " ".join(head) + " ", " " + " ".join(body) + " "


class WikiPage(models.Model):
    agent_id = models.CharField(max_length=128)
    namespace = models.CharField(max_length=16, choices=[(n, n) for n in NAMESPACES], default="auto")
    doc_type = models.CharField(max_length=16, choices=[(d, d) for d in DOC_TYPES])
    slug = models.CharField(max_length=64)
    title = models.CharField(max_length=300)
    tags = models.JSONField(default=list)
    author = models.CharField(max_length=128, default="auto-distill")
    trust = models.DecimalField(max_digits=4, decimal_places=3)
    source_type = models.CharField(max_length=32, choices=[(s, s) for s in SOURCE_TYPES])
    created = models.DateTimeField()
    updated = models.DateTimeField()
    last_verified = models.DateTimeField(null=True, blank=True)
    summary = models.TextField(blank=True, default="")
    original_text = models.TextField(blank=True, default="")
    pointer_subject = models.CharField(max_length=512)  # wiki:auto/<doc_type>/<slug>, kept on promotion
    pointer_id = models.CharField(max_length=40, null=True, blank=True)  # the memory row written last
    removed_at = models.DateTimeField(null=True, blank=True)
    removed_reason = models.TextField(blank=True, default="")
    # search documents (see search_documents()), kept up to date by save()
    search_head = models.TextField(blank=True, default="", editable=False)
    search_body = models.TextField(blank=True, default="", editable=False)

    class Meta:
        db_table = "wiki_pages"
        ordering = ["-updated", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent_id", "namespace", "doc_type", "slug"], name="uniq_wiki_page_path"
            ),
            # One page per pointer subject: promotion moves the page, it never copies it.
            models.UniqueConstraint(fields=["agent_id", "pointer_subject"], name="uniq_wiki_page_pointer"),
        ]
        indexes = [
            models.Index(fields=["agent_id", "namespace", "doc_type"], name="idx_wiki_agent_ns_doc"),
            models.Index(fields=["agent_id", "created"], name="idx_wiki_agent_created"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id}:{self.path}"

    def save(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        fields = kwargs.get("update_fields")
        if fields is None or {"title", "tags", "summary", "original_text"} & set(fields):
            self.search_head, self.search_body = search_documents(self)
            if fields is not None:
                kwargs["update_fields"] = {*fields, "search_head", "search_body"}
        super().save(*args, **kwargs)

    @property
    def path(self) -> str:
        return f"{self.namespace}/{self.doc_type}/{self.slug}"

    @property
    def removed(self) -> bool:
        return self.removed_at is not None

    @property
    def trust_text(self) -> str:
        """Trust with three decimals, as in the frontmatter (``0.300``)."""
        return f"{self.trust:.3f}"


class WikiRevision(models.Model):
    page = models.ForeignKey(WikiPage, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    title = models.CharField(max_length=300)
    summary = models.TextField(blank=True, default="")
    original_text = models.TextField(blank=True, default="")
    tags = models.JSONField(default=list)
    actor = models.CharField(max_length=256)
    reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField()
    accepted = models.BooleanField(default=False)  # a curator accepted (promoted) this revision

    class Meta:
        db_table = "wiki_revisions"
        ordering = ["page_id", "number"]
        constraints = [models.UniqueConstraint(fields=["page", "number"], name="uniq_wiki_revision_number")]

    def __str__(self) -> str:
        return f"{self.page_id} r{self.number}"
