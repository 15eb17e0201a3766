"""Database glue: the SQLite function the FTS triggers call, registered on every new connection."""

from __future__ import annotations

from django.db.backends.signals import connection_created
from django.dispatch import receiver

from memory.engine.text import document


def _fts_doc(content, subject, obj):  # type: ignore[no-untyped-def]
    return document(content, subject, obj)


@receiver(connection_created)
def _register_sqlite_functions(sender, connection, **kwargs):  # type: ignore[no-untyped-def]
    if connection.vendor == "sqlite":
        connection.connection.create_function("memdesk_fts_doc", 3, _fts_doc, deterministic=True)
        # the document since migration 0018: content, subject, predicate, object
        connection.connection.create_function("memdesk_fts_doc", 4, document, deterministic=True)
