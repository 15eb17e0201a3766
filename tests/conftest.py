"""Named actors and small builders shared by every test (see DESIGN.md, Tests)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.utils import timezone

from memory import engine
from memory.models import Agent, Membership, Role, Team

PASSWORD = "correct-horse-battery"


def pytest_collection_modifyitems(config, items):  # noqa: ANN001
    """Tests marked ``postgres`` need a PostgreSQL DATABASE_URL; without it they fail loudly (never skip).
    Tests marked ``sqlite_only`` exercise a SQLite-only code path: on PostgreSQL they are deselected (reported
    as such), not skipped."""
    for item in items:
        if item.get_closest_marker("redis"):
            item.add_marker(pytest.mark.usefixtures("_require_redis"))
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        dropped = [item for item in items if item.get_closest_marker("sqlite_only")]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if not item.get_closest_marker("sqlite_only")]
        return
    for item in items:
        if item.get_closest_marker("postgres"):
            item.add_marker(pytest.mark.usefixtures("_require_postgres"))


@pytest.fixture
def _require_redis():
    import socket

    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=2).close()
    except OSError:
        pytest.fail("this test needs Redis at 127.0.0.1:6379 (CI starts it)", pytrace=False)


@pytest.fixture
def _require_postgres():
    pytest.fail(
        "this test needs PostgreSQL: set DATABASE_URL=postgres://postgres@127.0.0.1:5432/test", pytrace=False
    )


@pytest.fixture
def on_postgres() -> bool:
    return connection.vendor == "postgresql"


def dt(text: str) -> datetime:
    """An aware UTC datetime from 'YYYY-MM-DD' or a full ISO string."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


# --- teams, users, agents ---------------------------------------------------------------------------------


@pytest.fixture
def team(db) -> Team:  # noqa: ANN001
    return Team.objects.create(name="Acme Support", slug="acme")


@pytest.fixture
def other_team(db) -> Team:  # noqa: ANN001
    return Team.objects.create(name="Other Org", slug="other")


def make_user(username: str, team: Team | None = None, role: str = Role.VIEWER, **extra):
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)
    if team is not None:
        Membership.objects.create(team=team, user=user, role=role)
    return user


@pytest.fixture
def viewer(team):
    return make_user("vera", team, Role.VIEWER)


@pytest.fixture
def reviewer(team):
    return make_user("rex", team, Role.REVIEWER)


@pytest.fixture
def curator(team):
    return make_user("cora", team, Role.CURATOR)


@pytest.fixture
def team_admin(team):
    return make_user("ada", team, Role.ADMIN)


@pytest.fixture
def outsider(other_team):
    return make_user("otto", other_team, Role.ADMIN)


@pytest.fixture
def agent(team) -> Agent:
    return Agent.objects.create(agent_id="support-bot", display_name="Support bot", team=team)


@pytest.fixture
def other_agent(other_team) -> Agent:
    return Agent.objects.create(agent_id="other-bot", display_name="Other bot", team=other_team)


@pytest.fixture
def csrf_client() -> Client:
    """A client that enforces CSRF like a browser does."""
    return Client(enforce_csrf_checks=True)


def login(client: Client, user) -> Client:
    client.force_login(user)
    return client


# --- memory vectors (issue 17) -------------------------------------------------------------------------------


@pytest.fixture(autouse=True, scope="session")
def _memory_vectors_off_in_subprocesses():
    """Servers the tests start (MCP over HTTP and stdio, workers) inherit the environment: vectors off there too."""
    old = os.environ.get("MEMDESK_EMBEDDER")
    os.environ["MEMDESK_EMBEDDER"] = "off"
    yield
    if old is None:
        os.environ.pop("MEMDESK_EMBEDDER", None)
    else:
        os.environ["MEMDESK_EMBEDDER"] = old


@pytest.fixture(autouse=True)
def _memory_vectors_off():
    """Memory vectors are off in every test unless it attaches an embedder (``set_memory_embedder``): the
    default embedder, when installed, would otherwise embed every write of the suite."""
    from memory.engine import embeddings, vectors

    embeddings.set_memory_embedder(None)
    vectors.clear_cache()
    yield
    embeddings.reset_memory_embedder()
    vectors.clear_cache()


# --- quarantine batches (the desk's tests and the audit log's) -------------------------------------------


@pytest.fixture
def guard_defaults(tmp_path, monkeypatch):
    """The burst guard at its documented defaults (5 facts per subject per origin within 3600 s)."""
    from memory import config

    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    config._cache.clear()
    yield
    config._cache.clear()


def make_burst(
    agent_id: str,
    subject: str,
    *,
    origin: str = "channel:spam",
    facts: list[tuple[str, str, str]] | None = None,
    start=None,
):
    """A burst through the agent-facing write path (``store_temporal(protect=True)``): one fact a minute from
    ``start`` (default: 10 minutes ago); five or more trip the burst guard. ``facts`` are (predicate, object,
    content). Returns the batch's ``ApprovalRequest`` (None if the guard did not trip)."""
    import time_machine

    from memory.models import ApprovalRequest

    facts = facts or [(f"claim_{k}", f"value-{k}", f"{subject} claim {k} is value-{k}") for k in range(5)]
    start = start or timezone.now() - timedelta(minutes=10)
    for k, (predicate, obj, content) in enumerate(facts):
        with time_machine.travel(start + timedelta(seconds=30 * k), tick=False):
            engine.store_temporal(
                agent_id=agent_id,
                content=content,
                subject=subject,
                predicate=predicate,
                object=obj,
                origin=origin,
                protect=True,
            )
    return (
        ApprovalRequest.objects.filter(agent_id=agent_id, subject=subject, origin=origin)
        .order_by("-id")
        .first()
    )


# --- the LLM layer (SPEC B0) -------------------------------------------------------------------------------


@pytest.fixture
def fake_llm():
    """A scripted OpenAI-compatible server on 127.0.0.1 (tests/fake_llm.py), closed after the test."""
    from tests.fake_llm import FakeLLM

    server = FakeLLM()
    yield server
    server.close()
