"""Wiki pages (SPEC W1–W5): long-lived documents distilled from conversations, with their revisions.

The full text of a page lives here only; memory holds one pointer row per page (``pointer_id``), written by the
engine (``wiki.services`` calls ``memory.engine``).
"""

from __future__ import annotations

from django.db import models

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
