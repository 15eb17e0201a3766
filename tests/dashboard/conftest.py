"""Builders for dashboard tests. Memories are always created through the engine, never the ORM."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory import engine
from tests.conftest import dt

HISTORY_KEY = ("alice", "lives_in")


@pytest.fixture
def history(agent):
    """One key with its whole story: Lisbon (superseded) → Berlin (current), a retracted poison write that
    had superseded Berlin (so Berlin was restored), and a user reaffirmation of Berlin."""
    subject, predicate = HISTORY_KEY
    lisbon = engine.store_temporal(
        agent_id=agent.agent_id,
        content="Alice lives in Lisbon",
        subject=subject,
        predicate=predicate,
        object="Lisbon",
        valid_from=dt("2020-01-01"),
        origin="user_direct",
        source_event="chat-1",
    )
    berlin = engine.store_temporal(
        agent_id=agent.agent_id,
        content="Alice moved to Berlin",
        subject=subject,
        predicate=predicate,
        object="Berlin",
        valid_from=dt("2023-06-01"),
        origin="user_direct",
        source_event="chat-2",
    )
    engine.store_temporal(
        agent_id=agent.agent_id,
        content="Alice moved to Berlin",
        subject=subject,
        predicate=predicate,
        object="Berlin",
        valid_from=dt("2023-06-01"),
        origin="operator:crm",
        source_event="crm-sync-7",
    )
    poison = engine.store_temporal(
        agent_id=agent.agent_id,
        content="Alice lives in Atlantis",
        subject=subject,
        predicate=predicate,
        object="Atlantis",
        valid_from=timezone.now() - timedelta(days=1),
        origin="channel:spam",
        source_event="spam-1",
    )
    purge = engine.invalidate_by_origin(agent_id=agent.agent_id, origin="channel:spam", actor="user:ada")
    return {"lisbon": lisbon.id, "berlin": berlin.id, "poison": poison.id, "purge": purge}


def make_memories(agent_id: str, n: int, *, origin: str = "user_direct", word: str = "note") -> list[str]:
    """``n`` plain memories and ``n`` facts (two keys each), all through the engine."""
    ids = []
    for i in range(n):
        ids.append(
            engine.store(
                agent_id=agent_id,
                content=f"{word} number {i} about the weekly report",
                origin=origin,
                tags=["bulk"],
            ).id
        )
        ids.append(
            engine.store_temporal(
                agent_id=agent_id,
                content=f"Customer {i} prefers email, {word}",
                subject=f"customer-{i}",
                predicate="prefers_channel",
                object="email",
                valid_from=dt("2024-01-01"),
                origin=origin,
            ).id
        )
    return ids


def assert_login_redirect(client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def assert_same_404(client, hidden_url: str, missing_url: str) -> None:
    """An agent the user may not see answers exactly like one that does not exist."""
    hidden = client.get(hidden_url)
    missing = client.get(missing_url)
    assert hidden.status_code == missing.status_code == 404
    assert hidden.content == missing.content
    assert hidden.headers.get("Content-Type") == missing.headers.get("Content-Type")


def quarantine_fact(agent_id: str, **fact) -> str:
    """A quarantined fact, written by the engine's own write path.

    The public quarantine path (``store_facts_protected`` + burst guard, SPEC P5) is not built yet, so this
    calls the engine's internal ``write_fact(..., quarantine=True)``. Switch to the public function once it lands.
    """
    from memory.engine.temporal import check_fact, write_fact

    return write_fact(check_fact(agent_id=agent_id, **fact), quarantine=True).id


# --- the per-role browser tests (accessibility, journeys): the seeded demo served by a uvicorn child ---------


@pytest.fixture(scope="session")
def roles_demo_db(tmp_path_factory):
    """``manage.py seed_demo`` plus a few held batches (``tests.dashboard.roles_provision``) in a SQLite file,
    built once per session; each test serves its own copy (``roles_server``)."""
    import os

    from tests.mcp.harness import provision

    path = tmp_path_factory.mktemp("roles-demo") / "demo.sqlite3"
    wanted = {
        "MEMDESK_DEMO_PASSWORD": "demo-password-123",
        "MEMDESK_CONFIG": str(path.parent / "absent.toml"),
    }
    previous = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)  # the child's environment: the demo password, the burst guard at its defaults
    try:
        info = provision(path, module="tests.dashboard.roles_provision")
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return path, info


@pytest.fixture(scope="module")
def roles_server(roles_demo_db, tmp_path_factory):
    """A copy of the roles demo served by uvicorn for one test module: (harness with ``.base``, provisioning
    info). The journeys' writes never touch what another journey or the accessibility scan looks at."""
    import os

    from tests.mcp.harness import HttpHarness, copy_db

    source, info = roles_demo_db
    db_path = tmp_path_factory.mktemp("roles-server") / "demo.sqlite3"
    copy_db(source, db_path)
    previous = os.environ.get("MEMDESK_CONFIG")
    os.environ["MEMDESK_CONFIG"] = str(
        db_path.parent / "absent.toml"
    )  # read once, by the child's environment
    try:
        harness = HttpHarness(db_path, {})
    finally:
        if previous is None:
            os.environ.pop("MEMDESK_CONFIG")
        else:
            os.environ["MEMDESK_CONFIG"] = previous
    try:
        yield harness, info
    finally:
        harness.close()


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ANN001, ARG001
    """Say where the per-role journeys left their screenshots (var/test-artifacts/<role>/<width>/)."""
    import sys

    roles = sys.modules.get("tests.dashboard.test_browser_roles")
    if roles is not None and roles.WRITTEN:
        terminalreporter.write_line(
            f"browser journey screenshots: {roles.ARTIFACTS}/<role>/<width>/ ({', '.join(sorted(roles.WRITTEN))})"
        )
