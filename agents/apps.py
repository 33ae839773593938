from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agent messages"

    def ready(self) -> None:
        # The briefing lists a recipient's unfetched deliveries; graph cannot import this app,
        # so the app tells it where they come from (graph/ops/briefing_deliveries.py).
        from agents.briefing import unfetched_delivery_lines
        from graph.ops.briefing_deliveries import register_delivery_source

        register_delivery_source(unfetched_delivery_lines)
