"""The insights jobs (SPEC B8, B9): what the scheduler runs once a day for each agent, and the journal sweep.

Plain functions over the engine's public API, safe to run twice; ``memory.tasks`` wraps them as jobs:

* ``daily(agent_id=…)``: today's interest snapshot (``engine.profile_snapshot``), the skill levels decay calls
  for (``engine.skills_check``, proposals to review), and the tiering pass (``engine.retier``, with the LLM
  layer's client when ``[llm]`` is configured, else extractive digests);
* ``sweep()``: the query journal's retention (``engine.journal_sweep``, ``[insights] journal_retention_days``).
"""

from __future__ import annotations

from typing import Any

from memory import engine


def daily(*, agent_id: str, day: Any = None, llm: Any = None, use_llm: bool = True) -> dict[str, Any]:
    """Snapshot, skill check and tiering for one agent. ``day`` is the UTC day to snapshot (default today: run it
    late in the day, or just after midnight with yesterday's date). ``llm`` defaults to the configured client."""
    if llm is None and use_llm:
        from memory.llm import client_from_config

        llm = client_from_config()  # its budget is [llm] max_calls_per_run
    snapshot = engine.profile_snapshot(agent_id=agent_id, day=day)
    proposed = engine.skills_check(agent_id=agent_id)
    tiers = engine.retier(agent_id=agent_id, llm=llm)
    return {
        "agent_id": agent_id,
        "snapshot": snapshot.day.isoformat(),
        "skill_proposals": proposed,
        "tiers": tiers.to_dict(),
    }


def sweep() -> dict[str, int]:
    """Delete journal rows past retention (snapshots, gaps and feedback stay)."""
    return engine.journal_sweep()
