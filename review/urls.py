from django.urls import URLPattern, path

from . import discoveries, views
from .quarantine import DESK
from .queue import QueueKind
from .review_queue import QUEUE

app_name = "review"


def queue_paths(base: str, kind: QueueKind) -> list[URLPattern]:
    """One queue's URLs under ``base`` (it captures ``agent_id``), named ``<kind.name>`` and
    ``<kind.name>_approve|_reject|_claim|_release|_undo|_bulk``, plus ``_edit`` for a kind with an
    ``edit_form`` and ``_revert`` for a ``revertable`` one (``QueueKind.url`` reverses them)."""
    k = {"kind": kind}
    item = f"{base}<int:item_id>/"
    paths = [
        path(base, views.queue_page, k, name=kind.name),
        path(
            f"{item}approve/", views.queue_decide, {**k, "decision": "approve"}, name=f"{kind.name}_approve"
        ),
        path(f"{item}reject/", views.queue_decide, {**k, "decision": "reject"}, name=f"{kind.name}_reject"),
        path(f"{item}claim/", views.queue_claim, {**k, "action": "claim"}, name=f"{kind.name}_claim"),
        path(f"{item}release/", views.queue_claim, {**k, "action": "release"}, name=f"{kind.name}_release"),
        path(f"{item}undo/", views.queue_undo, k, name=f"{kind.name}_undo"),
        path(f"{base}bulk/", views.queue_bulk, k, name=f"{kind.name}_bulk"),
    ]
    if kind.edit_form is not None:
        paths.append(path(f"{item}edit/", views.queue_edit, k, name=f"{kind.name}_edit"))
    if kind.revertable:
        paths.append(path(f"{item}revert/", views.queue_revert, k, name=f"{kind.name}_revert"))
    return paths


urlpatterns = [
    *queue_paths("agents/<str:agent_id>/quarantine/", DESK),
    *queue_paths("agents/<str:agent_id>/review/", QUEUE),
    path("agents/<str:agent_id>/review/log/", views.review_log, name="review_log"),
    path("agents/<str:agent_id>/discoveries/", discoveries.discoveries, name="discoveries"),
    path(
        "agents/<str:agent_id>/discoveries/<int:item_id>/<str:action>/",
        discoveries.discovery_act,
        name="discovery_act",
    ),
]
