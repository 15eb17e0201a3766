"""Engine events other code can subscribe to (sent after the transaction commits).

``event_committed`` is the outbox's own announcement (kwargs: event_id, name, agent_id, payload), which the job
layer (``memory.delivery``) turns into the domain signals below and the webhook."""

from django.dispatch import Signal

# kwargs: agent_id, request_id, payload (origin, subject, ids, write_ids, snippet, reason)
knowledge_quarantined = Signal()
# kwargs: agent_id, request_id, payload; sent once at 2/3 of an approval's TTL
knowledge_quarantine_reminder = Signal()
# kwargs: agent_id, request_id, status (approved | denied | expired), actor, reason
knowledge_decided = Signal()
# kwargs: event_id, name, agent_id, payload; sent by the engine's outbox once the event's transaction commits
event_committed = Signal()
