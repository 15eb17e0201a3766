"""Django admin for site administrators: teams, memberships and agent assignment.

Memory rows are read-only here: only ``memory.engine`` writes them.
"""

from __future__ import annotations

from django.contrib import admin

from .models import Agent, AuditEvent, Membership, Memory, Team


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "created_at")
    prepopulated_fields = {"slug": ("name",)}
    inlines = [MembershipInline]


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ("agent_id", "display_name", "team", "created_at")
    list_filter = ("team",)
    search_fields = ("agent_id", "display_name")
    readonly_fields = ("agent_id", "created_at")

    def has_add_permission(self, request):  # agents register themselves on their first write
        return False


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Memory)
class MemoryAdmin(ReadOnlyAdmin):
    list_display = ("id", "agent_id", "subject", "predicate", "object", "origin", "valid_from", "valid_until")
    list_filter = ("layer", "quarantined")
    search_fields = ("id", "agent_id", "subject", "content")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "agent_id", "actor", "action", "memory_id", "reason")
    list_filter = ("action",)
