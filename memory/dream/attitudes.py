"""The reflect phase's attitude proposals (SPEC B1 reflect, B6): consolidated mistake rules become attitudes.

A consolidated rule (``reflexion.maybe_consolidate``: subject ``category:<c>``, predicate ``requires_care``,
source event ``reflexion_consolidation``) says a kind of mistake keeps happening. ``reflect_attitudes`` proposes
one attitude per current rule, in the category the mistake kind maps to, through ``engine.attitude_propose``:
so it goes to the review queue like an agent's proposal, is never proposed twice (the queue's fingerprint), and
in a dry run is stored as a dry item only. Read-only over memory rows.
"""

from __future__ import annotations

from typing import Any

from memory import engine
from memory.models import Memory

# mistake category (SPEC X1) -> attitude category (SPEC B6)
CATEGORY_OF = {
    "safety": "safety",
    "hallucination": "system_feedback",
    "factual": "workflow",
    "capability": "tool_behavior",
    "behavioral": "autonomy_level",
}
RULE_EVENT = "reflexion_consolidation"
RULE_PREDICATE = "requires_care"
MAX_STATEMENT = 480


def _statement(category: str, rule: Memory) -> str:
    lines = [line.strip() for line in rule.content.splitlines()[1:] if line.strip()]
    first = lines[0].lstrip("-• ").strip() if lines else ""
    text = f"Take extra care with {category} issues; they recur"
    text += f": {first}" if first else "."
    return text[:MAX_STATEMENT]


def reflect_attitudes(
    *, agent_id: str, run_id: int | None = None, dry: bool = False, actor: str = "system:dream"
) -> list[engine.AttitudeProposal]:
    """Propose an attitude for each current consolidated mistake rule of the agent (see the module docstring).
    Returns what each proposal did (``proposed``, ``already_proposed``, ``reaffirmed`` or ``dry``)."""
    rules = (
        Memory.objects.filter(agent_id=agent_id, source_event=RULE_EVENT, predicate=RULE_PREDICATE)
        .filter(engine.belief_current_q())
        .order_by("subject", "id")
    )
    out = []
    for rule in rules:
        category = str(
            (rule.metadata or {}).get("category") or (rule.subject or "").removeprefix("category:")
        )
        target = CATEGORY_OF.get(category)
        if target is None:
            continue
        sources: Any = (rule.metadata or {}).get("source_mistake_ids") or []
        confidence = min(0.9, 0.5 + 0.1 * len(sources))
        out.append(
            engine.attitude_propose(
                agent_id=agent_id,
                category=target,
                statement=_statement(category, rule),
                confidence=confidence,
                evidence=[rule.id],
                actor=actor,
                run_id=run_id,
                dry=dry,
            )
        )
    return out
