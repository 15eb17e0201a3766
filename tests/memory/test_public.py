"""``engine.audit_record`` (memory/engine/public.py): the audit function of apps with their own tables (the
wiki)."""

from __future__ import annotations

import pytest

from memory import engine
from memory.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_audit_record_writes_one_validated_event():
    event_id = engine.audit_record(
        agent_id="bot",
        actor="user:cora",
        action="wiki_promote",
        subject="wiki:auto/sop/x",
        memory_id="m_1",
        reason="checked",
        details={"path": "curated/sop/x", "revision": 2},
    )
    event = AuditEvent.objects.get(pk=event_id)
    assert (event.agent_id, event.actor, event.action, event.subject, event.memory_id, event.reason) == (
        "bot",
        "user:cora",
        "wiki_promote",
        "wiki:auto/sop/x",
        "m_1",
        "checked",
    )
    assert event.details == {"path": "curated/sop/x", "revision": 2}


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"agent_id": ""}, "agent_id"),
        ({"actor": " "}, "actor"),
        ({"action": "Drop Table"}, "action"),
        ({"action": ""}, "action"),
        ({"reason": "x" * 2001}, "reason"),
        ({"details": {"x": object()}}, "details"),
        ({"details": {"x": float("nan")}}, "details"),
        ({"details": {1: "x"}}, "details"),
        ({"details": ["x"]}, "details"),
        ({"details": {"x": "y" * 20_000}}, "details"),
        ({"subject": "s" * 513}, "subject"),
    ],
)
def test_audit_record_refuses_bad_input_and_writes_nothing(kw, field):
    args = {"agent_id": "bot", "actor": "user:cora", "action": "wiki_remove", **kw}
    with pytest.raises(engine.InvalidArgument) as err:
        engine.audit_record(**args)
    assert err.value.field == field
    assert AuditEvent.objects.count() == 0


def test_audit_record_is_keyword_only():
    with pytest.raises(TypeError):
        engine.audit_record("bot", "user:cora", "wiki_remove")  # type: ignore[misc]
