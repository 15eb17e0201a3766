"""The periodic sweep: expire requests past their TTL (fail-closed) and send due reminders."""

from __future__ import annotations

from datetime import datetime

from memory.models import ApprovalRequest

from .. import common as c
from ..claims import AlreadyDecided
from .approvals import quarantine_expire
from .outbox import emit


def sweep(*, actor: str = "system:ttl") -> dict[str, int]:
    """Expire due requests and send due reminders; safe to run any number of times, from any process."""
    t = c.now()
    expired = 0
    for rid in ApprovalRequest.objects.filter(status=ApprovalRequest.PENDING, expires_at__lte=t).values_list(
        "id", flat=True
    ):
        try:
            quarantine_expire(rid, actor=actor)
            expired += 1
        except AlreadyDecided:
            continue
    reminded = 0
    due = ApprovalRequest.objects.filter(
        status=ApprovalRequest.PENDING, remind_at__lte=t, reminded_at__isnull=True
    ).values_list("id", flat=True)
    for rid in due:
        reminded += _remind(rid, t)
    return {"expired": expired, "reminded": reminded}


@c.write_transaction
def _remind(request_id: int, t: datetime) -> int:
    if not ApprovalRequest.objects.filter(id=request_id, reminded_at__isnull=True, status="pending").update(
        reminded_at=t
    ):
        return 0
    request = ApprovalRequest.objects.get(id=request_id)
    emit(
        "knowledge.quarantine_reminder",
        request.agent_id,
        {"request_id": request.id, "expires_at": request.expires_at.isoformat(), **request.payload},
    )
    return 1
