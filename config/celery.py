"""Celery app for MEMDESK_TASK_BACKEND=celery (Redis broker). The default backend is django-q2.

celery -A config worker -B --loglevel=info     # a worker with the beat scheduler
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("memdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.beat_schedule = {
    "quarantine-sweep": {"task": "memory.tasks.quarantine_sweep", "schedule": 60.0},
}


def _register() -> None:
    from memory import tasks

    for fn in (tasks.deliver_event, tasks.quarantine_sweep):
        app.task(name=f"memory.tasks.{fn.__name__}")(fn)


app.on_after_configure.connect(lambda sender, **kw: _register(), weak=False)
