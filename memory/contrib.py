"""What installed apps contribute to memory by module name (``mcp_tools``, ``demo_seed``), so memory never
imports another app: the dependency points from the app to memory."""

from importlib import import_module
from types import ModuleType

from django.apps import apps
from django.utils.module_loading import module_has_submodule


def app_modules(name: str) -> list[ModuleType]:
    """Each installed app's ``<app>.<name>`` module, in INSTALLED_APPS order; apps without one are skipped."""
    return [
        import_module(f"{config.name}.{name}")
        for config in apps.get_app_configs()
        if module_has_submodule(config.module, name)
    ]
