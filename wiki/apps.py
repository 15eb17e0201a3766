from django.apps import AppConfig


class WikiConfig(AppConfig):
    name = "wiki"

    def ready(self) -> None:
        from memory.engine import register_erasure_hook

        from .erasure import erase_pages

        register_erasure_hook("wiki_pages", erase_pages)
