from django.apps import AppConfig


class ClubConfig(AppConfig):
    name = "referee.server.club"
    label = "club"
    verbose_name = "Club"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from referee.server.club import signals  # noqa: F401  (connects the receivers)
        from referee.server.shared import jobsync  # noqa: F401
