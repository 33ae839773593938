from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "Dashboard"

    def ready(self) -> None:
        from core import config_sections
        from dashboard.theme import SECTION

        config_sections.register(SECTION)
