from django.urls import URLPattern, path

from . import discoveries, views
from .quarantine import DESK
from .queue import QueueKind

app_name = "review"


def queue_paths(base: str, kind: QueueKind) -> list[URLPattern]:
    """One queue's URLs under ``base`` (it captures ``agent_id``), named ``<kind.name>`` and
    ``<kind.name>_approve|_reject|_claim|_release|_undo|_bulk`` (``QueueKind.url`` reverses them)."""
    k = {"kind": kind}
    item = f"{base}<int:item_id>/"
    return [
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


urlpatterns = [
    *queue_paths("agents/<str:agent_id>/quarantine/", DESK),
    path("agents/<str:agent_id>/discoveries/", discoveries.discoveries, name="discoveries"),
    path(
        "agents/<str:agent_id>/discoveries/<int:item_id>/<str:action>/",
        discoveries.discovery_act,
        name="discovery_act",
    ),
]
