"""B10/P8 jobs over Celery with a real Redis broker: the TTL sweep and webhook delivery run in a worker."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.db import connections

from config.celery import app
from memory import engine
from memory.models import ApprovalRequest
from memory.tasks import enqueue

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]
BROKER = "redis://127.0.0.1:6379/15"


@pytest.fixture
def celery_worker(settings):
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=2).close()
    except OSError:
        pytest.fail("this test needs Redis at 127.0.0.1:6379 (CI starts it)", pytrace=False)
    settings.TASK_BACKEND = "celery"
    app.conf.update(broker_url=BROKER, result_backend=BROKER, task_always_eager=False)
    app.loader.import_default_modules()
    app.finalize()
    # the worker runs in a thread: close its database connection after each task so nothing outlives the test
    task_postrun.connect(_close_connections, weak=False, dispatch_uid="memdesk-test-close")
    try:
        with start_worker(
            app, perform_ping_check=False, pool="solo", loglevel="WARNING", shutdown_timeout=10
        ):
            yield app
    finally:
        task_postrun.disconnect(dispatch_uid="memdesk-test-close")


def _close_connections(**kwargs):
    connections.close_all()


def test_the_ttl_sweep_runs_in_a_celery_worker_over_redis(celery_worker, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    for k in range(5):
        engine.store_temporal(
            agent_id="celery-bot",
            content=f"c{k}",
            subject="s",
            predicate=f"p{k}",
            object="o",
            origin="channel:x",
            protect=True,
        )
    request = ApprovalRequest.objects.get(agent_id="celery-bot")
    ApprovalRequest.objects.filter(id=request.id).update(expires_at=request.created_at - timedelta(seconds=1))
    result = enqueue("quarantine_sweep")
    assert result.get(timeout=30) == {"expired": 1, "reminded": 0}
    request.refresh_from_db()
    assert request.status == "expired" and request.decided_by == "system:ttl"
