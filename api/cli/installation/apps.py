from django.apps import AppConfig


class InstallationConfig(AppConfig):
    """The commands that run and keep an installation (serve, worker, setup, doctor, status,
    config, reindex, kg, …), apart from the commands that call one operation each
    (api/cli/management/commands/)."""

    name = "api.cli.installation"
    label = "memesh_installation"
    verbose_name = "memesh installation commands"
