from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """The pages where a person decides on proposals: the HTMX review page and the admin."""

    name = "review"
    verbose_name = "Review"
