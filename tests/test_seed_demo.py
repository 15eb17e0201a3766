"""``manage.py seed_demo``: users and agents, chains that resolve, a purged source, CJK search, idempotency."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction
from django.test import Client

from memory import engine
from memory.management import demo_data as d
from memory.models import (
    Agent,
    FactWrite,
    Feedback,
    Membership,
    Memory,
    MemoryTier,
    Mistake,
    QueryJournal,
    Team,
)
from web.access import visible_agents
from wiki.models import WikiRevision

PASSWORD = "demo-password-for-tests"
NOW = datetime(2025, 3, 15, 12, 0, tzinfo=UTC)
DAY = datetime(2025, 3, 15, tzinfo=UTC)  # the seeding day: world times are "days before" it
A = d.SUPPORT_BOT


def days_ago(n: float) -> datetime:
    return DAY - timedelta(days=n)


def seed(*args: str) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


@pytest.fixture(scope="class")
def demo(django_db_setup, django_db_blocker) -> Iterator[str]:  # noqa: ANN001
    """Seed once per class inside a transaction that is rolled back afterwards (each test adds a savepoint)."""
    with django_db_blocker.unblock(), pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMDESK_DEMO_PASSWORD", PASSWORD)
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            with time_machine.travel(NOW, tick=True):
                output = seed()
            yield output
        finally:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


@pytest.fixture
def seeded(demo: str, db) -> str:  # noqa: ANN001
    return demo


def value_at(subject: str, predicate: str, at: datetime) -> str | None:
    row = engine.get_at(agent_id=A, subject=subject, predicate=predicate, at=at)
    return row.object if row else None


def snapshot() -> dict[str, object]:
    return {
        "memories": sorted(
            Memory.objects.values_list("id", "valid_until", "invalidated_by_event", "access_count")
        ),
        "writes": FactWrite.objects.count(),
        "mistakes": Mistake.objects.count(),
        "users": sorted(get_user_model().objects.values_list("username", "is_superuser")),
        "memberships": sorted(Membership.objects.values_list("team__slug", "user__username", "role")),
        "teams": Team.objects.count(),
        "agents": sorted(Agent.objects.values_list("agent_id", "team__slug")),
        "wiki": sorted(WikiRevision.objects.values_list("page__slug", "number", "accepted")),
    }


class TestSeededDemo:
    """Read-only checks on one seeded demo (the second-run check re-seeds inside its own savepoint)."""

    def test_users_teams_agents(self, seeded: str) -> None:
        users = {u.username: u for u in get_user_model().objects.all()}
        assert set(users) == {"admin", "curator", "reviewer", "viewer", "researcher"}
        assert users["admin"].is_superuser and users["admin"].is_staff
        assert not any(users[n].is_superuser or users[n].is_staff for n in ("curator", "reviewer", "viewer"))
        roles = dict(
            Membership.objects.filter(team__name="Acme Support").values_list("user__username", "role")
        )
        assert roles == {"admin": "admin", "curator": "curator", "reviewer": "reviewer", "viewer": "viewer"}
        assert list(
            Membership.objects.filter(team__slug="northwind-research").values_list("user__username", "role")
        ) == [("researcher", "admin")]
        assert dict(Agent.objects.values_list("agent_id", "team__name")) == {
            "support-bot": "Acme Support",
            "research-bot": "Northwind Research",
        }
        # through the sign-in form (the login throttle's backend reads the request)
        signed_in = Client().post("/login/", {"username": "curator", "password": PASSWORD})
        assert signed_in.status_code == 302 and signed_in.url == "/"

    def test_isolation_between_teams(self, seeded: str) -> None:
        users = {u.username: u for u in get_user_model().objects.all()}
        for name in ("admin", "curator", "reviewer", "viewer"):
            assert [a.agent_id for a in visible_agents(users[name])] == ["support-bot"]
        assert [a.agent_id for a in visible_agents(users["researcher"])] == ["research-bot"]

    def test_output_prints_logins_password_and_url(self, seeded: str) -> None:
        assert "http://127.0.0.1:8000/" in seeded
        for name in ("admin", "curator", "reviewer", "viewer", "researcher"):
            assert re.search(rf"^\s+{name}\s", seeded, re.M)
        assert f"password (all demo users): {PASSWORD}" in seeded

    def test_a_few_hundred_memories_across_ten_weeks_from_many_origins(self, seeded: str) -> None:
        rows = Memory.objects.filter(agent_id=A)
        assert 200 <= rows.count() <= 500
        assert Memory.objects.filter(agent_id=d.RESEARCH_BOT).count() >= 10
        assert set(d.ORIGINS) <= set(rows.values_list("origin", flat=True))
        assert set(rows.values_list("layer", flat=True)) == {"episodic", "semantic", "procedural"}
        starts = rows.filter(subject__isnull=False).values_list("valid_from", flat=True)
        assert min(starts) <= days_ago(65) and max(starts) >= days_ago(10)
        assert rows.exclude(derived_from=[]).count() >= 2
        assert Mistake.objects.filter(agent_id=A).count() == len(d.SUPPORT_MISTAKES)

    def test_deploy_target_chain(self, seeded: str) -> None:
        assert value_at("acme-web", "deploy_target", days_ago(80)) is None
        assert value_at("acme-web", "deploy_target", days_ago(40)) == "Vercel"
        assert value_at("acme-web", "deploy_target", days_ago(10)) == "Cloudflare Workers"
        assert value_at("acme-web", "deploy_target", NOW) == "Cloudflare Workers"
        history = engine.get_history(agent_id=A, subject="acme-web", predicate="deploy_target")
        assert [h.object for h in history] == ["Vercel", "Cloudflare Workers"]
        assert (
            history[0].superseded_by == history[1].id and history[0].invalidated_by_event == "demo:deploy-cf"
        )
        # reaffirmed by the user: no new row, an entry on the current one
        assert [e["origin"] for e in history[1].reaffirmed_by] == ["user_direct"]
        cdn = engine.get_at(agent_id=A, subject="acme-web", predicate="cdn", at=NOW)
        assert cdn.derived_from == [history[1].id] and cdn.origin_trust == pytest.approx(0.6)

    def test_role_and_manager_change(self, seeded: str) -> None:
        assert value_at("Dana Whitfield", "role", days_ago(50)) == "Tier 1 support agent"
        assert value_at("Dana Whitfield", "role", days_ago(30)) == "Tier 2 support engineer"
        assert value_at("Dana Whitfield", "role", NOW) == "Support team lead"
        assert value_at("Dana Whitfield", "manager", days_ago(30)) == "Sam Ortiz"
        assert value_at("Dana Whitfield", "manager", NOW) == "Priya Raman"

    def test_divorce_learned_before_the_marriage(self, seeded: str) -> None:
        assert value_at("Jordan Lee", "marital_status", days_ago(70)) is None
        assert value_at("Jordan Lee", "marital_status", days_ago(40)) == "married to Casey Lee"
        assert value_at("Jordan Lee", "marital_status", days_ago(10)) == "divorced"
        history = engine.get_history(agent_id=A, subject="Jordan Lee", predicate="marital_status")
        married, divorced = history
        assert married.valid_until == divorced.valid_from and divorced.valid_until is None
        assert married.ingested_at > divorced.ingested_at  # learned later, true earlier

    def test_chinese_facts_and_search(self, seeded: str) -> None:
        assert value_at("老闆", "姓名", days_ago(40)) == "王老闆"
        assert value_at("老闆", "姓名", NOW) == "李老闆"
        hits = engine.search(agent_id=A, query="李老闆", limit=20)
        text_hits = [h for h in hits if h.fts_position is not None]
        assert len(text_hits) >= 3 and all("李老闆" in h.content for h in text_hits)
        assert len(hits) - len(text_hits) <= 3  # graph-only hits (SPEC G4): facts linked to 李老闆
        taipei = engine.search(agent_id=A, query="台北會議", limit=20)
        assert len(taipei) >= 5 and all("台北會議" in h.content for h in taipei)

    def test_reaffirmation_raises_confidence_once_per_new_origin_class(self, seeded: str) -> None:
        sla = engine.get_at(agent_id=A, subject="acme-support", predicate="first_response_sla", at=NOW)
        assert [e["origin"] for e in sla.reaffirmed_by] == ["operator", "tool_echo"]
        assert sla.confidence == pytest.approx(0.9)  # +0.1 for the operator; tool_echo never corroborates

    def test_purged_source_is_retracted_and_clean_fact_restored(self, seeded: str) -> None:
        spam = Memory.objects.filter(agent_id=A, origin=d.SPAM_ORIGIN)
        assert spam.count() == 3
        assert set(spam.values_list("invalidated_by_event", flat=True)) == {"origin_purge"}
        policy = engine.get_at(agent_id=A, subject="acme-support", predicate="refund_policy", at=NOW)
        assert (
            policy.object.startswith("30 days") and policy.origin == "operator" and policy.valid_until is None
        )
        history = engine.get_history(agent_id=A, subject="acme-support", predicate="refund_policy")
        assert [(h.origin, h.retracted) for h in history] == [("operator", False), (d.SPAM_ORIGIN, True)]
        # believed before the purge (record time), gone after
        poisoned = history[1]
        then = engine.get_at(
            agent_id=A, subject="acme-support", predicate="refund_policy", at=NOW, as_of=poisoned.ingested_at
        )
        assert then.object == "always approve, no limit"
        assert value_at("acme-web", "admin_contact", NOW) is None
        assert not any(
            h.origin == d.SPAM_ORIGIN for h in engine.search(agent_id=A, query="approve refund overdue")
        )
        derived = engine.get_at(agent_id=A, subject="refund-queue", predicate="auto_approve", at=NOW)
        assert derived.origin_trust == pytest.approx(0.1)  # its source was purged (SPEC P2)

    def test_a_graph_worth_curating(self, seeded: str) -> None:
        """People, projects and tools in 2-hop chains, three unmerged names of one person, an alias, and a
        quarantined burst drawn as dashed edges (the graph page, SPEC D6)."""
        view = engine.graph_view(agent_id=A, limit=1000)
        names = {n["id"] for n in view.nodes}
        assert {"李老闆", "zhixu", "boss li", "project lantern", "dana whitfield", "priya raman"} <= names
        assert "dana" not in names  # already an alias of Dana Whitfield
        assert [(x.canonical, x.alias) for x in engine.alias_list(agent_id=A)] == [
            ("dana whitfield", "dana"),
            ("wen zhao", "wen"),  # the dream story's alias pair
        ]
        held = [e for e in view.edges if e["quarantined"]]
        assert len(held) == 5 and {e["subject"] for e in held} == {"project lantern"}
        assert Memory.objects.filter(agent_id=A, origin=d.LANTERN_SPAM_ORIGIN, quarantined=True).count() == 5
        # 李老闆 → Project Lantern → Dana Whitfield → Priya Raman → zhixu: a chain of 2-hop neighbourhoods
        two_hops = engine.graph_view(agent_id=A, entity="李老闆", depth=2, limit=1000)
        assert "dana whitfield" in {n["id"] for n in two_hops.nodes}
        around_dana = engine.graph_view(agent_id=A, entity="Dana Whitfield", depth=2, limit=1000)
        assert {"zhixu", "李老闆", "aiko tanaka"} <= {n["id"] for n in around_dana.nodes}

    def test_merging_a_second_name_changes_what_search_finds(self, seeded: str) -> None:
        sponsor = engine.get_at(agent_id=A, subject="李老闆", predicate="sponsors", at=NOW)
        before = {h.id for h in engine.search(agent_id=A, query="what does zhixu prefer?")}
        assert sponsor.id not in before
        engine.alias_add(agent_id=A, canonical="李老闆", alias="zhixu", actor="user:curator")
        after = engine.search(agent_id=A, query="what does zhixu prefer?")
        graph_only = [h for h in after if h.fts_position is None]
        assert graph_only and all("zhixu" not in h.content.lower() for h in graph_only)
        assert all(
            "李老闆" in (h.subject or "") + (h.object or "") or h.subject == "老闆" for h in graph_only
        )

    def test_second_run_adds_nothing(self, seeded: str, monkeypatch) -> None:  # noqa: ANN001
        before = snapshot()
        with time_machine.travel(NOW + timedelta(hours=1), tick=True):
            output = seed()
        assert snapshot() == before
        assert "already seeded" in output and PASSWORD in output

    def test_wiki_pages_are_published_auto_and_one_is_promoted(self, seeded: str) -> None:
        from wiki import selectors as wiki_selectors
        from wiki.models import WikiPage

        pages = {p.slug: p for p in WikiPage.objects.filter(agent_id=A)}
        assert set(pages) == {doc.slug for doc in d.WIKI_PAGES}
        assert {p.doc_type for p in pages.values()} == {"sop", "policy", "charter", "reference"}
        removed = [p for p in pages.values() if p.removed]
        assert [p.slug for p in removed] == ["holiday-hours-2025"]  # the Removed list has a page to restore
        assert Memory.objects.get(id=removed[0].pointer_id).valid_until is not None
        pages = {slug: p for slug, p in pages.items() if not p.removed}
        curated = [p for p in pages.values() if p.namespace == "curated"]
        assert [p.slug for p in curated] == ["data-retention"]
        assert (curated[0].trust_text, curated[0].source_type) == ("0.800", "user_statement")
        for page in pages.values():
            if page.namespace == "auto":
                assert (page.trust_text, page.source_type, page.author) == (
                    "0.300",
                    "raw_dialogue",
                    "auto-distill",
                )
            pointer = Memory.objects.get(id=page.pointer_id)
            assert pointer.subject == f"wiki:auto/{page.doc_type}/{page.slug}" and pointer.valid_until is None
            assert page.original_text not in pointer.content
        # the zh policy is found by a Chinese query, the en SOP by an English one
        assert wiki_selectors.search(agent_id=A, query="資料保留")[0].page.slug == "data-retention"
        assert wiki_selectors.search(agent_id=A, query="refunds over $500")[0].page.slug == "refund-over-500"
        assert WikiPage.objects.filter(agent_id=d.RESEARCH_BOT).count() == 0

    def test_one_dream_pass_leaves_real_work_for_reviewers(self, seeded: str) -> None:
        """SPEC B1-B3 on the demo: duplicates merged and changes superseded by the pass itself, an unsure
        conflict and three lint findings waiting in the review queue, an orphan pruned."""
        [run] = engine.dream_runs(agent_id=A)
        assert (run.status, run.dry_run, run.actor) == ("done", False, "system:seed_demo")
        assert all(phase["errors"] == [] for phase in run.phases.values())
        assert engine.dream_state(agent_id=A).mode == "apply"
        assert f"dream run #{run.id} over support-bot: 5 applied, 4 waiting for review (done)" in seeded
        items = [i for i in engine.review_list(agent_id=A, status=None) if i.kind in ("conflict", "lint")]
        summary = sorted(
            (
                i.kind,
                i.status,
                i.payload.get("rule"),
                i.payload.get("verdict_type"),
            )
            for i in items
        )
        assert summary == [
            ("conflict", "applied", "a", "conflict:MERGE"),  # "Atlassian Statuspage" respelt
            ("conflict", "applied", "b", "conflict:MERGE"),  # headquartered_in / hq
            ("conflict", "applied", "d", "conflict:COEXIST"),  # one call-notes template, two customers
            ("conflict", "applied", "d", "conflict:SUPERSEDE"),  # English notes
            ("conflict", "applied", "d", "conflict:SUPERSEDE"),  # Chinese notes
            ("conflict", "pending", "c", "conflict:UNSURE"),  # Wen Zhao / wen, a low-trust channel
            ("lint", "pending", "cycle", "lint:none"),
            ("lint", "pending", "value_domain", "lint:retract"),
            ("lint", "pending", "value_domain", "lint:retract"),
        ]
        later = NOW + timedelta(hours=1)
        assert value_at("status-page", "hosted_on", later) == "Atlassian Statuspage"
        assert value_at("Jordan Lee", "birthday", later) == "2089-07-14"  # retracted only on approval
        hits = engine.search(agent_id=A, query="值班通知", limit=10)
        assert [h.content for h in hits if "值班通知" in h.content] == [
            "台北團隊不再用 Slack 做值班通知，改用 Microsoft Teams。"
        ]
        # the fact derived from the purged poison is pruned: ended, never deleted
        assert value_at("refund-queue", "auto_approve", later) is None
        [derived] = engine.get_history(agent_id=A, subject="refund-queue", predicate="auto_approve")
        assert derived.invalidated_by_event == "dream_prune" and derived.origin_trust == pytest.approx(0.1)

    def test_the_operations_page_shows_the_pass(self, seeded: str) -> None:
        from django.contrib.auth import get_user_model

        client = Client()
        client.force_login(get_user_model().objects.get(username="reviewer"))
        [run] = engine.dream_runs(agent_id=A)
        html = client.get(f"/agents/{A}/operations/").content.decode()
        assert f'data-run="{run.id}"' in html and "5 · 4 · 1" in html and "cycle" in html

    def test_a_week_of_use_journal_feedback_gap_attitudes_skills_and_tiers(self, seeded: str) -> None:
        journal = QueryJournal.objects.filter(agent_id=A)
        assert journal.count() >= 10 and journal.dates("created_at", "day").count() >= 6
        verdicts = set(
            Feedback.objects.filter(agent_id=A, target_type="query").values_list("verdict", flat=True)
        )
        assert verdicts == {"CORRECT", "INCORRECT", "AMBIGUOUS"}
        (gap,) = engine.knowledge_gaps(agent_id=A)
        assert gap.fail_count == 2 and "sla" in gap.signature and "credits" in gap.signature
        snapshots = engine.interest_snapshots(agent_id=A)
        assert len(snapshots) == 8 and any(s.delta["intents_new"] for s in snapshots)
        week = engine.profile(agent_id=A, days=7, at=NOW + timedelta(hours=1))
        assert week.intents and week.entities and week.memories
        current = {a.category for a in engine.attitudes(agent_id=A)}
        assert {"workflow", "testing_philosophy", "preference"} <= current
        history = [a for a in engine.attitudes(agent_id=A, history=True) if a.category == "workflow"]
        assert [a.version for a in history] == [2, 1] and history[1].superseded_at is not None
        pending = engine.review_list(agent_id=A, kind="attitude")
        assert [p.payload["category"] for p in pending] == ["autonomy_level"]
        levels = {s.name: s.level for s in engine.skills(agent_id=A)}
        assert {1, 2, 3} <= set(levels.values()) and levels["sql window functions"] == 3
        assert engine.review_list(agent_id=A, kind="skill")  # a level change waits for review
        tiers = engine.tier_counts(agent_id=A)
        assert all(tiers[t] >= 1 for t in ("hot", "warm", "cold", "frozen")), tiers
        assert MemoryTier.objects.filter(agent_id=A).exclude(original=None).count() >= 3

    def test_research_bot_is_separate(self, seeded: str) -> None:
        assert engine.search(agent_id=d.RESEARCH_BOT, query="Cloudflare") == []
        row = engine.get_at(agent_id=d.RESEARCH_BOT, subject="project:atlas", predicate="lead", at=NOW)
        assert row.object == "Dr. Lindqvist"
        assert engine.dream_runs(agent_id=d.RESEARCH_BOT) == []  # only the support bot dreams in the demo


def test_generated_password_is_printed_and_works(db, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.delenv("MEMDESK_DEMO_PASSWORD", raising=False)
    output = seed()
    password = re.search(r"password \(all demo users\): (\S+)", output).group(1)
    assert len(password) >= 12
    assert get_user_model().objects.get(username="admin").check_password(password)


@pytest.mark.django_db(transaction=True)
def test_reset_reseeds_from_scratch(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MEMDESK_DEMO_PASSWORD", PASSWORD)
    seed()
    first = set(Memory.objects.values_list("id", flat=True))
    count = len(first)
    seed("--reset", "--noinput")
    again = set(Memory.objects.values_list("id", flat=True))
    assert len(again) == count and not (first & again)
    assert get_user_model().objects.count() == 5
