"""What use teaches ranking (SPEC B9): per-memory feedback weights and access reinforcement.

* **Feedback weight** ``w`` in [−1, 1]: each verdict moves it ``w ← w + α(r − w)`` with α = 0.2 and
  r = +1 (CORRECT), −1 (INCORRECT), 0 (AMBIGUOUS); a memory without verdicts has w = 0. The R2 score adds
  ``w_feedback · w`` (``RetrievalWeights.w_feedback``), shown on every hit as ``feedback``.
* **Access reinforcement** multiplies the recency half-life S of R2 by A ∈ [1, 10]:
  ``A_full = 1 + 9·(1 − exp(−access_count / 10))``, kept while the memory was used in the last 30 days and
  fading after that: ``A = 1 + (A_full − 1)·exp(−(idle_days − 30) / 30)``.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from django.db import connection

from memory.models import FeedbackWeight

from . import rawsql

ALPHA = 0.2
BOUND = 1.0
REWARD = {"CORRECT": 1.0, "INCORRECT": -1.0, "AMBIGUOUS": 0.0}
REINFORCE_MAX = 10.0
REINFORCE_SCALE = 10.0  # accesses that bring the multiplier ~63 % of the way to its maximum
REINFORCE_GRACE_DAYS = 30.0  # unused for longer than this, the multiplier fades
REINFORCE_FADE_DAYS = 30.0


def updated_weight(weight: float, reward: float) -> float:
    """One verdict's step: ``w + α(r − w)``, kept within [−1, 1]."""
    return max(-BOUND, min(BOUND, weight + ALPHA * (reward - weight)))


def reinforcement(access_count: int, last_accessed: datetime | None, at: datetime) -> float:
    """The half-life multiplier A (1 for a memory never read back)."""
    if not last_accessed or access_count <= 0:
        return 1.0
    return multiplier(access_count, max(0.0, (at - last_accessed).total_seconds() / 86400.0))


def multiplier(access_count: int, idle_days: float) -> float:
    """A for a memory read ``access_count`` times, last ``idle_days`` ago."""
    full = 1.0 + (REINFORCE_MAX - 1.0) * (1.0 - math.exp(-access_count / REINFORCE_SCALE))
    fade = math.exp(-max(0.0, idle_days - REINFORCE_GRACE_DAYS) / REINFORCE_FADE_DAYS)
    return 1.0 + (full - 1.0) * fade


def feedback_weights(memory_ids: list[str]) -> dict[str, float]:
    """The feedback weights of these memories (ids absent from the answer have none: 0). One statement."""
    if not memory_ids:
        return {}
    marks = ", ".join(["%s"] * len(memory_ids))
    table = connection.ops.quote_name(FeedbackWeight._meta.db_table)
    rows = rawsql.run(
        f"SELECT memory_id, weight FROM {table} WHERE memory_id IN ({marks})", list(memory_ids)
    ).fetchall()
    return {row[0]: float(row[1]) for row in rows}


def adjust(agent_id: str, memory_ids: list[str], verdict: str, t: datetime) -> dict[str, float]:
    """Apply one verdict to each memory; returns the new weights. The caller holds the agent's feedback lock."""
    reward = REWARD[verdict]
    ids = list(dict.fromkeys(memory_ids))
    existing: dict[str, Any] = {
        row.memory_id: row for row in FeedbackWeight.objects.filter(memory_id__in=ids, agent_id=agent_id)
    }
    out: dict[str, float] = {}
    new_rows = []
    for mid in ids:
        row = existing.get(mid)
        if row is None:
            out[mid] = updated_weight(0.0, reward)
            new_rows.append(
                FeedbackWeight(memory_id=mid, agent_id=agent_id, weight=out[mid], verdicts=1, updated_at=t)
            )
            continue
        out[mid] = updated_weight(row.weight, reward)
        FeedbackWeight.objects.filter(memory_id=mid).update(
            weight=out[mid], verdicts=row.verdicts + 1, updated_at=t
        )
    if new_rows:
        FeedbackWeight.objects.bulk_create(new_rows)
    return out
