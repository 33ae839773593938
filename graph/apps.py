from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "graph"
    verbose_name = "Memory graph"

    def ready(self) -> None:
        from core import config_sections
        from graph import checks  # noqa: F401  registers the system checks
        from graph.config_sections import SECTIONS

        config_sections.register(*SECTIONS)
