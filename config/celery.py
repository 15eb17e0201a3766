"""Celery app for MEMDESK_TASK_BACKEND=celery (Redis broker). The default backend is django-q2.

celery -A config worker -B --loglevel=info     # a worker with the beat scheduler

The beat schedule is ``memory.tasks.SCHEDULES`` (the same list ``manage.py setup_schedules`` gives django-q2).
"""

from __future__ import annotations

import os

from celery import Celery

from memory.tasks import SCHEDULES  # plain Python: importing it needs no Django app

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("memdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.beat_schedule = {
    s.job.replace("_", "-"): {"task": f"memory.tasks.{s.job}", "schedule": 60.0 * s.minutes}
    for s in SCHEDULES
}


def _register() -> None:
    from memory import tasks

    for name in sorted(tasks.JOBS):
        app.task(name=f"memory.tasks.{name}")(getattr(tasks, name))


app.on_after_configure.connect(lambda sender, **kw: _register(), weak=False)
