from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory engine"

    def ready(self) -> None:
        from . import (
            db,  # noqa: F401  registers SQLite functions on every new connection
            delivery,
            signals,
        )

        signals.event_committed.connect(delivery.on_event_committed, dispatch_uid="memdesk.delivery")
