from django.urls import path

from . import graph_views, insights_views, ops_data_views, ops_views, restore_views, views

app_name = "dashboard"
urlpatterns = [
    path("", views.home, name="home"),
    path("agents/<str:agent_id>/", views.agent_home, name="agent"),
    path("agents/<str:agent_id>/memories/", views.memory_list, name="memories"),
    path("agents/<str:agent_id>/memories/<str:memory_id>/", views.memory_detail, name="memory"),
    path(
        "agents/<str:agent_id>/memories/<str:memory_id>/restore/",
        restore_views.fact_restore,
        name="fact_restore",
    ),
    path("agents/<str:agent_id>/timeline/", views.timeline, name="timeline"),
    path("agents/<str:agent_id>/tokens/", views.tokens, name="tokens"),
    path("agents/<str:agent_id>/tokens/<int:token_id>/revoke/", views.token_revoke, name="token_revoke"),
    path("agents/<str:agent_id>/mistakes/", views.mistakes, name="mistakes"),
    path("agents/<str:agent_id>/mistakes/preview/", views.mistakes_preview, name="mistakes_preview"),
    path("agents/<str:agent_id>/audit/", views.audit_log, name="audit"),
    path("agents/<str:agent_id>/operations/", ops_views.operations, name="operations"),
    path("agents/<str:agent_id>/operations/run/", ops_views.operations_start, name="operations_start"),
    path("agents/<str:agent_id>/operations/mode/", ops_views.operations_mode, name="operations_mode"),
    path("agents/<str:agent_id>/operations/purge/", ops_data_views.operations_purge, name="operations_purge"),
    path("agents/<str:agent_id>/operations/erase/", ops_data_views.operations_erase, name="operations_erase"),
    path(
        "agents/<str:agent_id>/operations/reassign/",
        ops_data_views.operations_reassign,
        name="operations_reassign",
    ),
    path(
        "agents/<str:agent_id>/operations/runs/<int:run_id>/",
        ops_views.operations_run,
        name="operations_run",
    ),
    path("agents/<str:agent_id>/insights/", insights_views.insights, name="insights"),
    path("agents/<str:agent_id>/graph/", graph_views.graph, name="graph"),
    path("agents/<str:agent_id>/graph/entity/", graph_views.graph_entity, name="graph_entity"),
    path("agents/<str:agent_id>/graph/download/", graph_views.graph_download, name="graph_download"),
    path(
        "agents/<str:agent_id>/graph/merge/preview/",
        graph_views.graph_merge_preview,
        name="graph_merge_preview",
    ),
    path("agents/<str:agent_id>/graph/merge/", graph_views.graph_merge, name="graph_merge"),
    path(
        "agents/<str:agent_id>/graph/merges/<int:event_id>/undo/",
        graph_views.graph_merge_undo,
        name="graph_merge_undo",
    ),
    path(
        "agents/<str:agent_id>/graph/facts/<str:memory_id>/retract/",
        graph_views.graph_retract,
        name="graph_retract",
    ),
]
