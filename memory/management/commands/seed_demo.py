"""``manage.py seed_demo [--reset]``: a realistic demo (teams, users, agents, ten weeks of memory).

Idempotent: teams, users, memberships and agents are upserted; an agent's memories are written only when it has
none from the demo yet (all of one agent's writes run in one transaction, so a run never leaves half a demo).
A freshly seeded support bot then gets one dream pass in apply mode (duplicates merged, conflicts and lint
findings queued for review), so the review queue and the operations page have real content.
Memory rows are written only through the engine (``store``, ``store_temporal``, ``invalidate_by_origin``,
``record_mistake``, ``alias_add``); people, teams and agents with the ORM. Other apps add to an agent's demo
in the same transaction through their ``demo_seed`` module (see ``memory.contrib``): the wiki's pages,
published through ``wiki.services``. The password of the demo users comes from ``MEMDESK_DEMO_PASSWORD`` or
is generated, and is printed at the end with the usernames and the URL.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from memory import engine
from memory.contrib import app_modules
from memory.engine.embeddings import memory_embedder_off
from memory.management import demo_data as d
from memory.management.demo_insights import seed_insights
from memory.models import Agent, Membership, Memory, Team

ACTOR = "system:seed_demo"
EVENT_PREFIX = "demo:"
URL = "http://127.0.0.1:8000/"
SEED = 20250301


class Command(BaseCommand):
    help = "Create the demo teams, users, agents and memories (idempotent). Prints the logins."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--reset",
            action="store_true",
            help="flush the whole database first (manage.py flush), then seed again",
        )
        parser.add_argument(
            "--noinput",
            "--no-input",
            action="store_false",
            dest="interactive",
            help="do not ask before --reset",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # The scripted story (its week of searches, feedback and the dream pass) is pinned without memory
        # vectors (tests/test_seed_demo.py); the demo rows get their vectors afterwards, so `make run` has them.
        with memory_embedder_off():
            self._seed(*args, **options)
        report = engine.vectors_backfill()
        if report.embedded:
            self.stdout.write(f"memory vectors: {report.embedded} embedded with {report.model}")

    def _seed(self, *args: Any, **options: Any) -> None:
        if options["reset"]:
            call_command("flush", interactive=options["interactive"], verbosity=0)
        password = os.environ.get("MEMDESK_DEMO_PASSWORD") or secrets.token_urlsafe(12)
        teams = _teams()
        _users(teams, password)
        _agents(teams)
        day = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
        seeded = {}
        app_seeds = [module.seed_agent for module in app_modules("demo_seed")]
        for agent_id, build in ((d.SUPPORT_BOT, _support_script), (d.RESEARCH_BOT, _research_script)):
            if Memory.objects.filter(agent_id=agent_id, source_event__startswith=EVENT_PREFIX).exists():
                seeded[agent_id] = False
                continue
            with transaction.atomic():
                _run(agent_id, build(day), day)
                for seed_agent in app_seeds:  # e.g. the wiki's pages of the support bot
                    seed_agent(agent_id, actor=ACTOR)
                if (
                    agent_id == d.SUPPORT_BOT
                ):  # a week of use: journal, feedback, gaps, attitudes, skills, tiers
                    seed_insights(agent_id, actor=ACTOR)
            seeded[agent_id] = True
        _discovery_demo(day)
        dream = _dream(d.SUPPORT_BOT) if seeded.get(d.SUPPORT_BOT) else None
        self._report(password, seeded, dream)

    def _report(self, password: str, seeded: dict[str, bool], dream: engine.DreamRunRecord | None) -> None:
        out = self.stdout
        out.write("")
        out.write(self.style.SUCCESS("memdesk demo is ready"))
        for agent_id, fresh in seeded.items():
            summary = engine.summarize(agent_id=agent_id)
            state = "seeded now" if fresh else "already seeded, left as is"
            out.write(
                f"  agent {agent_id}: {summary['total']} memory rows, {summary['current']} current, "
                f"{summary['retracted']} retracted ({state})"
            )
        if dream is not None:
            counts = dream.phases.get("consolidate", {}).get("counts", {})
            out.write(
                f"  dream run #{dream.id} over {d.SUPPORT_BOT}: {counts.get('applied', 0)} applied, "
                f"{counts.get('queued', 0)} waiting for review ({dream.status})"
            )
        out.write("")
        out.write(f"  open {URL} and log in as one of:")
        for username, (team_slug, role, superuser) in d.USERS.items():
            team = d.ACME["name"] if team_slug == d.ACME["slug"] else d.NORTHWIND["name"]
            extra = ", Django superuser" if superuser else ""
            out.write(f"    {username:<11} {role} of {team}{extra}")
        out.write(f"  password (all demo users): {password}")
        if not os.environ.get("MEMDESK_DEMO_PASSWORD"):
            out.write("  (generated; set MEMDESK_DEMO_PASSWORD to choose it. Every run sets it again.)")


# --- people, teams, agents (ORM) --------------------------------------------------------------------------


def _teams() -> dict[str, Team]:
    teams = {}
    for spec in (d.ACME, d.NORTHWIND):
        team = (
            Team.objects.filter(slug=spec["slug"]).first() or Team.objects.filter(name=spec["name"]).first()
        )
        if team is None:
            team = Team.objects.create(name=spec["name"], slug=spec["slug"])
        teams[spec["slug"]] = team
    return teams


def _users(teams: dict[str, Team], password: str) -> None:
    user_model = get_user_model()
    for username, (team_slug, role, superuser) in d.USERS.items():
        first, last = d.USER_NAMES[username]
        user, _ = user_model.objects.get_or_create(
            username=username,
            defaults={"first_name": first, "last_name": last, "email": f"{username}@demo.memdesk.example"},
        )
        user.is_superuser = user.is_staff = superuser
        user.is_active = True
        user.set_password(password)
        user.save()
        Membership.objects.update_or_create(team=teams[team_slug], user=user, defaults={"role": role})


def _agents(teams: dict[str, Team]) -> None:
    for agent_id, (name, team_slug) in d.AGENTS.items():
        Agent.objects.update_or_create(
            agent_id=agent_id, defaults={"display_name": name, "team": teams[team_slug]}
        )


# --- memories (engine only) -------------------------------------------------------------------------------


def _at(day: datetime, days: float, minute: int = 0) -> datetime:
    """World time ``days`` before the seeding day, during office hours."""
    return day - timedelta(days=days) + timedelta(hours=9, minutes=minute)


def _record_times(script: d.Script, day: datetime) -> dict[int, datetime]:
    """When the agent learned each of the script's first facts (record time, SPEC D7), so timelines show two
    axes: a while after each fact became true, in script order (the divorce is learned before the earlier
    marriage). Only the leading run of plain facts: from the first note, purge or guarded write on, the engine
    writes at the real time, so record time never runs backwards."""
    out: dict[int, datetime] = {}
    clock = day - timedelta(days=90)
    latest = timezone.now() - timedelta(minutes=5)
    for k, step in enumerate(script.steps):
        if not isinstance(step, d.Fact) or step.protect:
            break
        learned = _at(day, step.days, minute=k % 50) + timedelta(hours=2 + k % 7)
        clock = min(max(clock + timedelta(minutes=1), learned), latest)
        out[k] = clock
    return out


def _store_fact(
    agent_id: str, step: d.Fact, day: datetime, k: int, ids: dict[str, str]
) -> engine.StoreResult:
    return engine.store_temporal(
        agent_id=agent_id,
        content=step.content,
        subject=step.subject,
        predicate=step.predicate,
        object=step.object,
        valid_from=_at(day, step.days, minute=k % 50),
        valid_until=_at(day, step.until_days) if step.until_days is not None else None,
        confidence=step.confidence,
        origin=step.origin,
        derived_from=[ids[ref] for ref in step.derived_from],
        source_event=EVENT_PREFIX + step.ref,
        session_id=step.session,
        layer=step.layer,
        importance=step.importance,
        tags=step.tags,
        protect=step.protect,
        actor=ACTOR,
    )


def _run(agent_id: str, script: d.Script, day: datetime) -> None:
    ids: dict[str, str] = {}
    learned = _record_times(script, day)
    for k, step in enumerate(script.steps):
        if isinstance(step, d.Fact):
            with engine.recorded_at(learned[k]) if k in learned else contextlib.nullcontext():
                result = _store_fact(agent_id, step, day, k, ids)
        elif isinstance(step, d.Alias):
            engine.alias_add(agent_id=agent_id, canonical=step.canonical, alias=step.alias, actor=ACTOR)
            continue
        elif isinstance(step, d.Note):
            result = engine.store(
                agent_id=agent_id,
                content=step.content,
                layer=step.layer,
                tags=step.tags,
                importance=step.importance,
                source_event=EVENT_PREFIX + step.ref,
                session_id=step.session,
                origin=step.origin,
                actor=ACTOR,
            )
        else:
            engine.invalidate_by_origin(agent_id=agent_id, origin=step.origin, actor=ACTOR)
            continue
        if result.id:
            ids[step.ref] = result.id
    for m in script.mistakes:
        engine.record_mistake(
            agent_id=agent_id,
            category=m.category,
            input_summary=m.input_summary,
            what_went_wrong=m.what_went_wrong,
            ground_truth=m.ground_truth,
            actor=ACTOR,
        )


def _dream(agent_id: str) -> engine.DreamRunRecord:
    """One dream pass in apply mode (each item commits on its own, after the seeding transaction): the review
    queue and the operations page have real content."""
    engine.dream_mode_set(agent_id=agent_id, mode="apply", actor=ACTOR)
    return engine.dream_run(agent_id=agent_id, force=True, actor=ACTOR)


def _support_script(day: datetime) -> d.Script:
    rng = random.Random(SEED)
    steps: list[d.Fact | d.Note | d.Purge | d.Alias] = list(d.SUPPORT_STORY)

    # customers: plan (with upgrades), region, primary contact (some change)
    for n, customer in enumerate(d.CUSTOMERS):
        slug = customer.lower().replace(" ", "-")
        plan = rng.choice(d.PLANS[:2])
        start = rng.randint(55, 70)
        steps.append(d.Fact(f"{slug}-plan-1", f"customer:{customer}", "plan", plan,
                            f"CRM import: {customer} is on the {plan} plan.", start, "import",
                            tags=("customer",)))  # fmt: skip
        if n % 2 == 0:
            better = d.PLANS[d.PLANS.index(plan) + 1]
            steps.append(d.Fact(f"{slug}-plan-2", f"customer:{customer}", "plan", better,
                                f"{customer} upgraded from {plan} to {better}.", rng.randint(5, 40), "operator",
                                tags=("customer", "billing")))  # fmt: skip
        region = rng.choice(d.REGIONS)
        steps.append(d.Fact(f"{slug}-region", f"customer:{customer}", "region", region,
                            f"{customer}'s workspace is hosted in {region}.", start, "import",
                            tags=("customer",)))  # fmt: skip
        contact = rng.choice(d.CONTACTS)
        steps.append(d.Fact(f"{slug}-contact-1", f"customer:{customer}", "primary_contact", contact,
                            f"{contact} is the primary contact at {customer}.", start - 1,
                            rng.choice(["user_direct", "agent_derived"]), tags=("customer",)))  # fmt: skip
        if n % 3 == 0:
            other = rng.choice([c for c in d.CONTACTS if c != contact])
            steps.append(d.Fact(f"{slug}-contact-2", f"customer:{customer}", "primary_contact", other,
                                f"{customer}'s primary contact is now {other} ({contact} left).",
                                rng.randint(3, 30), "channel:telegram-ops", tags=("customer",)))  # fmt: skip

    # ticket notes (episodic), meeting notes in Chinese, product knowledge, runbooks
    origins = ["user_direct"] * 6 + ["channel:telegram-ops"] * 2 + ["tool_echo", "agent_derived"]
    for i in range(150):
        topic, issue, resolution = rng.choice(d.TICKETS)
        customer = rng.choice(d.CUSTOMERS)
        when = _at(day, rng.randint(1, 70))
        number = 41000 + i
        steps.append(
            d.Note(
                f"ticket-{number}",
                f"{when:%Y-%m-%d} ticket #{number}: {customer} {issue}; {rng.choice(d.SUPPORT_AGENTS)} {resolution}.",
                rng.choice(origins),
                importance=rng.choice([3, 4, 5, 5, 6]),
                tags=("ticket", topic),
                session=f"demo-ticket-{number}",
            )
        )
    for i, text in enumerate(d.TAIPEI_NOTES):
        steps.append(d.Note(f"taipei-{i}", text, "user_direct", importance=6, tags=("meeting", "台北"),
                            session=f"demo-taipei-{i}"))  # fmt: skip
    for i, text in enumerate(d.KNOWLEDGE):
        steps.append(d.Note(f"kb-{i}", text, rng.choice(["operator", "import", "user_direct"]), layer="semantic",
                            importance=6, tags=("kb",)))  # fmt: skip
    for i, text in enumerate(d.RUNBOOKS):
        steps.append(d.Note(f"runbook-{i}", text, "operator", layer="procedural", importance=8,
                            tags=("runbook",)))  # fmt: skip

    steps.extend(d.POISON_STORY)
    steps.extend(d.GRAPH_STORY)
    steps.extend(d.DREAM_STORY)
    return d.Script(steps=steps, mistakes=list(d.SUPPORT_MISTAKES))


def _discovery_demo(day: datetime) -> None:
    """The discovery story (memory/management/demo_discovery.py) for the support bot, written once, then a
    discovery run for each demo agent so that the inbox has items (a rerun adds nothing new)."""
    from memory.dream.discovery import discover
    from memory.management.demo_discovery import discovery_story

    story = discovery_story()
    if not Memory.objects.filter(agent_id=d.SUPPORT_BOT, source_event=EVENT_PREFIX + story[0].ref).exists():
        with transaction.atomic():
            _run(d.SUPPORT_BOT, d.Script(steps=list(story)), day)
    for agent_id in (d.SUPPORT_BOT, d.RESEARCH_BOT):
        discover(agent_id, actor=ACTOR)


def _research_script(day: datetime) -> d.Script:
    steps: list[d.Fact | d.Note | d.Purge | d.Alias] = list(d.RESEARCH_STORY)
    for i, text in enumerate(d.RESEARCH_NOTES):
        steps.append(d.Note(f"note-{i}", text, "user_direct", tags=("research",)))
    return d.Script(steps=steps)
