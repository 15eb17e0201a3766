"""Expire quarantine approvals past their TTL, send reminders at 2/3 of it, retry undelivered webhooks.

Runs every minute under django-q2 (`manage.py setup_schedules`) or Celery beat; safe to run by hand too.
"""

from django.core.management.base import BaseCommand

from memory import engine


class Command(BaseCommand):
    help = "Expire due quarantine approvals (rejected by system:ttl) and send due reminders."

    def handle(self, *args, **options):
        result = engine.quarantine_sweep(actor="system:ttl")
        self.stdout.write(f"expired {result['expired']}, reminded {result['reminded']}")
