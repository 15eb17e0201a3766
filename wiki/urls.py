"""Wiki curation pages (SPEC D5), included from config/urls.py under ``agents/<agent_id>/wiki/``."""

from django.urls import path

from . import views

app_name = "wiki"
urlpatterns = [
    path("", views.page_list, name="list"),
    path("<int:page_id>/", views.page_detail, name="page"),
    path("<int:page_id>/diff/", views.page_diff, name="diff"),
    path("<int:page_id>/edit/", views.page_edit, name="edit"),
    path("<int:page_id>/preview/", views.page_preview, name="preview"),
    path("<int:page_id>/promote/", views.page_promote, name="promote"),
    path("<int:page_id>/remove/", views.page_remove, name="remove"),
    path("<int:page_id>/restore/", views.page_restore, name="restore"),
]
