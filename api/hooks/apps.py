from django.apps import AppConfig


class HooksConfig(AppConfig):
    """The hooks transport: `memesh hook <event>` is found in this app's management/commands."""

    name = "api.hooks"
    label = "memesh_hooks"
    verbose_name = "memesh hooks"
