"""The wiki's part of ``manage.py seed_demo`` (found by name, see ``memory.contrib``): the support bot's auto
pages (an SOP, a policy, a charter, references; en and zh), published through ``services.publish_auto``, one
promoted and one removed (so the Removed list has a page to restore)."""

from memory.management import demo_data as d

from . import services


def seed_agent(agent_id: str, *, actor: str) -> None:
    """Called inside the agent's seeding transaction, after its memories; only the support bot has pages."""
    if agent_id != d.SUPPORT_BOT:
        return
    for doc in d.WIKI_PAGES:
        page = services.publish_auto(
            agent_id=agent_id,
            doc_type=doc.doc_type,
            slug=doc.slug,
            title=doc.title,
            summary=doc.summary,
            original_text=doc.original_text,
            tags=doc.tags,
            actor=actor,
        )
        if doc.promote_reason:
            services.promote(page=page, actor=actor, reason=doc.promote_reason)
        if doc.remove_reason:
            services.remove(page=page, actor=actor, reason=doc.remove_reason)
