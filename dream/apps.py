from django.apps import AppConfig


class DreamConfig(AppConfig):
    """The producers: LLM passes that stage proposals (nothing changes until a person accepts).
    An app so that the worker discovers its Celery tasks."""

    name = "dream"
    verbose_name = "Dream"

    def ready(self) -> None:
        from core import config_sections
        from dream.config import SECTIONS

        config_sections.register(*SECTIONS)
