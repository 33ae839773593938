from django.apps import AppConfig


class CliConfig(AppConfig):
    """The `memesh` commands: Django finds them in this app's management/commands."""

    name = "api.cli"
    label = "memesh_cli"
    verbose_name = "memesh commands"
