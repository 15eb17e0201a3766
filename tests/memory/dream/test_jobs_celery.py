"""SPEC B10: one dream run executed by a real Celery worker over Redis (MEMDESK_TASK_BACKEND=celery)."""

from __future__ import annotations

import pytest
import time_machine

from memory import engine
from memory.models import DreamRun, ReviewItem
from memory.tasks import enqueue
from tests.memory.dream import world as w
from tests.memory.dream.world import NOW, A
from tests.memory.test_celery import celery_worker  # noqa: F401 (the worker fixture)

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def test_a_dream_run_executes_in_a_celery_worker(celery_worker, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    ids = w.build()
    engine.dream_mode_set(agent_id=A, mode="apply", actor="user:ada")
    with time_machine.travel(NOW, tick=False):
        run = engine.dream_start(agent_id=A, force=True, actor="user:ada")
    result = enqueue("dream_execute", run.id)
    assert result.get(timeout=60) == {"run_id": run.id, "status": "done"}
    done = DreamRun.objects.get(id=run.id)
    assert done.status == "done" and list(done.phases) and not done.dry_run
    assert ReviewItem.objects.filter(agent_id=A, status="applied").count() >= 2
    assert engine.get_at(agent_id=A, subject="svc", predicate="deploy_target", at=NOW).id == ids["cf_old"]
