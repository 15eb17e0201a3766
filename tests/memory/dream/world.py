"""A small agent with something for every phase of the dream loop, written through the engine only.

``build()`` returns the ids the tests look at. All writes happen at fixed times (time-machine), so a test that
runs the loop at ``NOW`` knows what is old, what is recent and what each rule finds.
"""

from __future__ import annotations

from datetime import timedelta

import time_machine

from memory import engine
from tests.conftest import dt

A = "dream-a"
T0 = dt("2026-01-01")
NOW = dt("2026-03-01T12:00:00")
WRITTEN = NOW - timedelta(days=10)


def fact(subject: str, predicate: str, obj: str | None, *, content: str = "", agent_id: str = A, **kw) -> str:
    return engine.store_temporal(
        agent_id=agent_id,
        content=content or f"{subject} {predicate} {obj or ''}".strip(),
        subject=subject,
        predicate=predicate,
        object=obj,
        **kw,
    ).id


def note(content: str, *, agent_id: str = A, **kw) -> str:
    return engine.store(agent_id=agent_id, content=content, **kw).id


def build(agent_id: str = A) -> dict[str, str]:
    """Every phase has work: a respelt value (MERGE), a later value under an alias (SUPERSEDE), two values at
    once under an alias (UNSURE), contradicting plain notes, a future birthday (lint), an orphaned derived fact
    and an old unread note (prune), five sessions (the gate)."""
    ids: dict[str, str] = {}
    with time_machine.travel(NOW - timedelta(days=200), tick=False):
        ids["old_note"] = note(
            "The coffee machine on floor 3 was out of beans", agent_id=agent_id, importance=1
        )
    with time_machine.travel(WRITTEN, tick=False):
        ids["cf_old"] = fact("svc", "deploy_target", "Cloudflare Workers", valid_from=T0, agent_id=agent_id)
        ids["cf_new"] = fact(
            "svc",
            "deploy_target",
            "cloudflare workers (CF)",
            valid_from=T0 + timedelta(days=30),
            agent_id=agent_id,
        )
        engine.alias_add(agent_id=agent_id, canonical="ana", alias="ana b.")
        ids["ana_old"] = fact("ana", "works_at", "Acme Labs", valid_from=T0, agent_id=agent_id)
        ids["ana_new"] = fact(
            "ana b.", "works_at", "Globex Systems", valid_from=T0 + timedelta(days=40), agent_id=agent_id
        )
        engine.alias_add(agent_id=agent_id, canonical="carl", alias="carl m.")
        ids["carl_a"] = fact("carl", "lives_in", "Paris", valid_from=T0, agent_id=agent_id)
        ids["carl_b"] = fact("carl m.", "lives_in", "London", valid_from=T0, agent_id=agent_id)
        ids["birthday"] = fact("bob", "birthday", "2099-01-01", agent_id=agent_id)
        ids["source"] = fact("feed", "status", "green", origin="channel:spam", agent_id=agent_id)
        ids["derived"] = fact("dash", "status", "ok", derived_from=[ids["source"]], agent_id=agent_id)
        ids["jenkins_old"] = note("The platform team uses Jenkins for every release build", agent_id=agent_id)
        ids["jenkins_new"] = note(
            "The platform team no longer uses Jenkins for release builds; switched to GitHub Actions",
            agent_id=agent_id,
        )
        for k in range(5):
            note(f"session {k}: the user asked about invoices", agent_id=agent_id, session_id=f"s-{k}")
    with time_machine.travel(WRITTEN + timedelta(hours=1), tick=False):
        engine.invalidate_by_origin(agent_id=agent_id, origin="channel:spam", actor="user:ada")
    return ids
