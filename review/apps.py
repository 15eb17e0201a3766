from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"

    def ready(self) -> None:
        from web.access import register_nav_count

        from .discoveries import open_items_expr
        from .review_selectors import pending_review_expr
        from .selectors import pending_batches_expr

        # the navigation's badges: subqueries on the agent every page already loads
        register_nav_count("pending_batches", pending_batches_expr)
        register_nav_count("pending_review", pending_review_expr)
        # the discovery inbox's badge: its open items
        register_nav_count("open_discoveries", open_items_expr)
