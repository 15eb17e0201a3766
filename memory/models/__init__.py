"""Models mirror the engine's schema. Only ``memory.engine`` writes memory rows."""

from .accounts import Agent, AgentToken, DailyCounter, Membership, Role, Team
from .audit import AuditEvent
from .background import DreamRun, DreamState, ReviewItem, ReviewPolicy
from .discovery import Community, DiscoveryItem, DiscoveryRun, EntityEdge
from .feedback import VERDICTS, Feedback
from .graph import EntityAlias, EntityEmbedding, MemoryEntity
from .guard import ApprovalRequest, GuardCounter, OutboundEvent
from .insights import (
    ATTITUDE_CATEGORIES,
    TIERS,
    Attitude,
    FeedbackWeight,
    InterestSnapshot,
    KnowledgeGap,
    MemoryTier,
    QueryJournal,
    Skill,
)
from .memories import (
    LAYERS,
    RETRACT_EVENTS,
    FactWrite,
    GraphGeneration,
    Memory,
)
from .reflexion import CATEGORIES, Mistake
from .vectors import MemoryVector

__all__ = [
    "Community",
    "DiscoveryItem",
    "DiscoveryRun",
    "EntityEdge",
    "ATTITUDE_CATEGORIES",
    "TIERS",
    "Attitude",
    "FeedbackWeight",
    "InterestSnapshot",
    "KnowledgeGap",
    "MemoryTier",
    "QueryJournal",
    "Skill",
    "DreamRun",
    "DreamState",
    "ReviewItem",
    "ReviewPolicy",
    "EntityAlias",
    "EntityEmbedding",
    "MemoryEntity",
    "ApprovalRequest",
    "GuardCounter",
    "OutboundEvent",
    "CATEGORIES",
    "DailyCounter",
    "Feedback",
    "VERDICTS",
    "Mistake",
    "LAYERS",
    "RETRACT_EVENTS",
    "Agent",
    "AgentToken",
    "AuditEvent",
    "FactWrite",
    "GraphGeneration",
    "Membership",
    "Memory",
    "MemoryVector",
    "Role",
    "Team",
]
