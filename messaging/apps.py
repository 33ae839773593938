from django.apps import AppConfig


def unfetched_delivery_lines(project: str, recipient: str, session: str | None) -> list[str]:
    """messaging/briefing.py's, imported when a briefing asks: every process sets the apps up,
    and most (a hook, `memesh --help`) never brief anyone (docs/performance-notes.md)."""
    from messaging.briefing import unfetched_delivery_lines as lines

    return lines(project, recipient, session)


class MessagingConfig(AppConfig):
    name = "messaging"
    # The label the tables and migrations were made under.
    label = "agents"
    verbose_name = "Agent messages"

    def ready(self) -> None:
        # The briefing lists a recipient's unfetched deliveries; graph cannot import this app,
        # so the app tells it where they come from (graph/ops/kit/delivery_source.py).
        from graph.ops.kit.delivery_source import register_delivery_source

        register_delivery_source(unfetched_delivery_lines)
