from django.urls import path

from . import views

app_name = "review"
urlpatterns = [
    path("agents/<str:agent_id>/quarantine/", views.quarantine, name="quarantine"),
    path(
        "agents/<str:agent_id>/quarantine/<int:request_id>/approve/",
        views.quarantine_decide,
        {"decision": "approve"},
        name="quarantine_approve",
    ),
    path(
        "agents/<str:agent_id>/quarantine/<int:request_id>/reject/",
        views.quarantine_decide,
        {"decision": "reject"},
        name="quarantine_reject",
    ),
    path(
        "agents/<str:agent_id>/quarantine/<int:request_id>/claim/",
        views.quarantine_claim,
        {"action": "claim"},
        name="quarantine_claim",
    ),
    path(
        "agents/<str:agent_id>/quarantine/<int:request_id>/release/",
        views.quarantine_claim,
        {"action": "release"},
        name="quarantine_release",
    ),
    path(
        "agents/<str:agent_id>/quarantine/<int:request_id>/undo/",
        views.quarantine_undo,
        name="quarantine_undo",
    ),
    path("agents/<str:agent_id>/quarantine/bulk/", views.quarantine_bulk, name="quarantine_bulk"),
]
