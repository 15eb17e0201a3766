from django.urls import path

from . import views

app_name = "dashboard"
urlpatterns = [
    path("", views.home, name="home"),
    path("agents/<str:agent_id>/", views.agent_home, name="agent"),
    path("agents/<str:agent_id>/memories/", views.memory_list, name="memories"),
    path("agents/<str:agent_id>/memories/<str:memory_id>/", views.memory_detail, name="memory"),
    path("agents/<str:agent_id>/timeline/", views.timeline, name="timeline"),
]
