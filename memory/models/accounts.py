from __future__ import annotations

from django.conf import settings
from django.db import models


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    REVIEWER = "reviewer", "Reviewer"
    CURATOR = "curator", "Curator"
    ADMIN = "admin", "Admin"


ROLE_RANK = {Role.VIEWER: 0, Role.REVIEWER: 1, Role.CURATOR: 2, Role.ADMIN: 3}


class Team(models.Model):
    name = models.CharField(max_length=120, unique=True)
    slug = models.SlugField(max_length=120, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="uniq_membership")]

    def has_role(self, needed: str) -> bool:
        return ROLE_RANK[Role(self.role)] >= ROLE_RANK[Role(needed)]


class Agent(models.Model):
    """A memory namespace. Registered on first write; unassigned (team NULL) until an admin assigns it."""

    agent_id = models.CharField(max_length=128, unique=True)
    display_name = models.CharField(max_length=200, blank=True, default="")
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="agents")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.display_name or self.agent_id


class AgentToken(models.Model):
    """Scoped agent credential (SPEC A2). Only a hash of the secret is stored."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=120, blank=True, default="")
    prefix = models.CharField(max_length=16, db_index=True)
    token_hash = models.CharField(max_length=128, unique=True)
    scopes = models.JSONField(default=list)
    external = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)


class DailyCounter(models.Model):
    """Per-agent daily quotas (e.g. 1000 ``memory_store`` calls a day), incremented atomically."""

    agent_id = models.CharField(max_length=128)
    day = models.DateField()
    kind = models.CharField(max_length=64)
    count = models.IntegerField(default=0)

    class Meta:
        db_table = "daily_counters"
        constraints = [models.UniqueConstraint(fields=["agent_id", "day", "kind"], name="uniq_daily_counter")]
