"""Shared builders for the wiki tests."""

from __future__ import annotations

import pytest

from memory import config

SOP_TEXT = (
    "1. Announce the deploy window in #ops.\n2. Run the canary for 15 minutes.\n"
    "3. Promote the canary or roll back with `deployctl rollback`.\n"
)


@pytest.fixture(autouse=True)
def default_guard(tmp_path, monkeypatch):
    """The documented guard defaults (window 3600 s, 5 writes per subject), whatever memdesk.toml says."""
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    config._cache.clear()


def publish(agent_id: str = "support-bot", **kw):
    from wiki import services

    args = {
        "doc_type": "sop",
        "title": "Deploy runbook",
        "summary": "How we ship a release safely.",
        "original_text": SOP_TEXT,
    }
    args.update(kw)
    return services.publish_auto_result(agent_id=agent_id, **args)
