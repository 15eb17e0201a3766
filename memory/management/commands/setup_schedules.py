"""Create (or update) the django-q2 schedules of memdesk's periodic jobs. Idempotent; `make run` calls it."""

from django.core.management.base import BaseCommand
from django_q.models import Schedule

SCHEDULES = [
    # (name, function, minutes)
    ("memdesk: quarantine TTL sweep", "memory.tasks.quarantine_sweep", 1),
]


class Command(BaseCommand):
    help = "Register memdesk's periodic jobs with django-q2."

    def handle(self, *args, **options):
        for name, func, minutes in SCHEDULES:
            Schedule.objects.update_or_create(
                name=name,
                defaults={"func": func, "schedule_type": Schedule.MINUTES, "minutes": minutes, "repeats": -1},
            )
            self.stdout.write(f"scheduled {func} every {minutes} min")
