from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "graph"
    verbose_name = "Memory graph"

    def ready(self) -> None:
        from graph import checks  # noqa: F401  registers the system checks
