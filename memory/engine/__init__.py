"""The memory engine: the only code that writes memory rows. Import as ``from memory import engine``."""

from .common import graph_generation
from .feedback import FeedbackResult, feedback_record, new_query_id
from .guard import (
    AlreadyDecided,
    approval_preview,
    quarantine_approve,
    quarantine_expire,
    quarantine_reject,
    store_facts_protected,
)
from .guard import sweep as quarantine_sweep
from .importer import InvalidImportFile, LegacyImportResult, import_legacy
from .injection import ScanResult, scan_fact, scan_injection
from .purge import expire_by_subject, invalidate_by_origin
from .reflexion import maybe_consolidate, recall, record_mistake, reflexion_context, render_block
from .retrieval import get_by_ids, get_memory, list_recent, search, search_layer, summarize
from .temporal import get_at, get_history, store, store_temporal
from .tokens import (
    Principal,
    Unauthorized,
    authenticate,
    consume_quota,
    token_create,
    token_list,
    token_revoke,
)
from .types import (
    ContentTooLarge,
    EngineError,
    Forbidden,
    ImportResult,
    InvalidArgument,
    InvalidTime,
    MemoryRecord,
    NotFound,
    PurgeResult,
    RateLimited,
    RetrievalWeights,
    SearchHit,
    StoreResult,
    TooManyIds,
)

__all__ = [
    "ScanResult",
    "scan_fact",
    "scan_injection",
    "AlreadyDecided",
    "approval_preview",
    "quarantine_approve",
    "quarantine_expire",
    "quarantine_reject",
    "quarantine_sweep",
    "store_facts_protected",
    "InvalidImportFile",
    "LegacyImportResult",
    "import_legacy",
    "FeedbackResult",
    "feedback_record",
    "new_query_id",
    "render_block",
    "Principal",
    "Unauthorized",
    "authenticate",
    "consume_quota",
    "maybe_consolidate",
    "recall",
    "record_mistake",
    "reflexion_context",
    "token_create",
    "token_list",
    "token_revoke",
    "ContentTooLarge",
    "EngineError",
    "Forbidden",
    "ImportResult",
    "InvalidArgument",
    "InvalidTime",
    "MemoryRecord",
    "NotFound",
    "PurgeResult",
    "RateLimited",
    "RetrievalWeights",
    "SearchHit",
    "StoreResult",
    "TooManyIds",
    "expire_by_subject",
    "get_at",
    "get_by_ids",
    "get_history",
    "get_memory",
    "graph_generation",
    "invalidate_by_origin",
    "list_recent",
    "search",
    "search_layer",
    "store",
    "store_temporal",
    "summarize",
]
