from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the sign-in/out messages)
