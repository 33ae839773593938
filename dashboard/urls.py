"""/dashboard/: the pages for people over the same operations the API serves (docs/dashboard.md)."""

from django.urls import path

from dashboard.views import (
    graph as views_graph,
)
from dashboard.views import (
    home as views_home,
)
from dashboard.views import (
    memories as views_memories,
)
from dashboard.views import (
    project as views_project,
)
from dashboard.views import (
    settings as views_settings,
)

app_name = "dashboard"

urlpatterns = [
    path("", views_home.home, name="home"),
    path("demo/seed", views_home.demo_seed_view, name="demo-seed"),
    path("demo/reset", views_home.demo_reset_view, name="demo-reset"),
    path("memories/", views_memories.memories, name="memories"),
    # <path:>: a memory's name may contain "/" (names are free-form), so the actions come first.
    path("memories/pin/<path:name>", views_memories.pin, name="pin"),
    path("memories/forget/<path:name>", views_memories.forget, name="forget"),
    path("memories/m/<path:name>", views_memories.memory, name="memory"),
    path("project/", views_project.project, name="project"),
    path("project/evidence", views_project.evidence, name="evidence"),
    path("graph/", views_graph.graph, name="graph"),
    path("graph/node", views_graph.node, name="node"),
    path("settings/", views_settings.settings_page, name="settings"),
    path("settings/save", views_settings.settings_save, name="settings-save"),
    path("settings/test", views_settings.settings_test, name="settings-test"),
    path("settings/reindex", views_settings.reindex, name="reindex"),
    path("settings/task/<str:task_id>", views_settings.task, name="task"),
]
