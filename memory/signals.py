"""Engine events other code can subscribe to (sent after the transaction commits)."""

from django.dispatch import Signal

# kwargs: agent_id, request_id, payload (origin, subject, ids, write_ids, snippet, reason)
knowledge_quarantined = Signal()
# kwargs: agent_id, request_id, payload; sent once at 2/3 of an approval's TTL
knowledge_quarantine_reminder = Signal()
# kwargs: agent_id, request_id, status (approved | denied | expired), actor, reason
knowledge_decided = Signal()
