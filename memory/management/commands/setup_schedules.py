"""Create (or update) the django-q2 schedules of memdesk's periodic jobs (``memory.tasks.SCHEDULES``).
Idempotent; `make run` calls it."""

from django.core.management.base import BaseCommand
from django_q.models import Schedule

from memory.tasks import SCHEDULES


class Command(BaseCommand):
    help = "Register memdesk's periodic jobs with django-q2."

    def handle(self, *args, **options):
        for s in SCHEDULES:
            Schedule.objects.update_or_create(
                name=s.name,
                defaults={
                    "func": f"memory.tasks.{s.job}",
                    "schedule_type": Schedule.MINUTES,
                    "minutes": s.minutes,
                    "repeats": -1,
                },
            )
            self.stdout.write(f"scheduled memory.tasks.{s.job} every {s.minutes} min")
