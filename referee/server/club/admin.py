"""The organiser's admin: every club record, with the actions a season needs."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from referee.server.club import models
from referee.server.club.people import make_join_code
from referee.server.club.seasonstate import move_competition


@admin.register(models.Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ["display_name", "user", "max_bots"]
    list_editable = ["max_bots"]
    search_fields = ["display_name", "user__username"]


@admin.register(models.JoinCode)
class JoinCodeAdmin(admin.ModelAdmin):
    list_display = ["code", "note", "uses", "max_uses", "active", "created_at"]
    list_editable = ["active"]
    readonly_fields = ["code", "uses", "created_at"]
    actions = ["another_like_it"]

    def save_model(self, request: HttpRequest, obj: models.JoinCode, form, change) -> None:
        if not change:   # a code made here is random too, never one typed in
            obj.code = make_join_code(obj.note, obj.max_uses).code
            return
        super().save_model(request, obj, form, change)

    @admin.action(description="Make a new code like each selected one")
    def another_like_it(self, request: HttpRequest, queryset: QuerySet) -> None:
        for code in queryset:
            made = make_join_code(code.note, code.max_uses)
            self.message_user(request, f"new join code: {made.code}", messages.SUCCESS)


@admin.register(models.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["token_hash", "prefix", "created_at", "last_used_at"]


@admin.register(models.Competition)
class CompetitionAdmin(admin.ModelAdmin):
    """A state changes only by the actions (as on the Organiser page): a closed competition
    stays closed. Competitions are opened on the Organiser page (services.open_competition
    checks their settings)."""

    list_display = ["name", "slug", "state", "updated_at", "closed_at", "report_path"]
    # Its settings and entry rules are checked by the service layer when it is opened, and
    # the runner reads them then: not typed in here.
    readonly_fields = ["slug", "folder", "state", "settings", "who_may_enter", "bots_per_student",
                       "created_at", "updated_at", "closed_at", "report_path"]
    actions = ["pause", "resume", "close"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False   # the first is made by the migrations, the others on the Organiser page

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def _move(self, request: HttpRequest, queryset: QuerySet, action: str) -> None:
        for row in queryset:
            done, text = move_competition(row.pk, action)
            self.message_user(request, f"{row.name}: {text}",
                              messages.SUCCESS if done else messages.ERROR)

    @admin.action(description="Pause play")
    def pause(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._move(request, queryset, "pause")

    @admin.action(description="Resume play")
    def resume(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._move(request, queryset, "resume")

    @admin.action(description="Close (final tables and report)")
    def close(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._move(request, queryset, "close")


class VersionInline(admin.TabularInline):
    model = models.BotVersion
    extra = 0
    fields = ["number", "league_name", "check_state", "season_state", "created_at", "error"]
    readonly_fields = fields
    can_delete = False


@admin.register(models.Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "disabled", "disabled_reason", "created_at"]
    list_filter = ["disabled"]
    inlines = [VersionInline]
    actions = ["disable", "enable"]

    @admin.action(description="Disable the selected bots (their games stay recorded)")
    def disable(self, request: HttpRequest, queryset: QuerySet) -> None:
        queryset.update(disabled=True)

    @admin.action(description="Enable the selected bots")
    def enable(self, request: HttpRequest, queryset: QuerySet) -> None:
        queryset.update(disabled=False, disabled_reason="")


@admin.register(models.BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    list_display = ["league_name", "check_state", "season_state", "created_at", "archive_size"]
    list_filter = ["check_state", "season_state"]


class LineInline(admin.TabularInline):
    model = models.CheckLine
    extra = 0
    readonly_fields = ["seq", "text", "created_at"]
    can_delete = False


@admin.register(models.CheckRun)
class CheckRunAdmin(admin.ModelAdmin):
    list_display = ["version", "state", "queued_at", "finished_at", "summary", "attempts"]
    list_filter = ["state"]
    inlines = [LineInline]


@admin.register(models.TestGame)
class TestGameAdmin(admin.ModelAdmin):
    list_display = ["id", "requester", "version", "state", "requested_at", "error"]
    list_filter = ["state"]


@admin.register(models.Standing)
class StandingAdmin(admin.ModelAdmin):
    list_display = ["id", "created_at", "games"]


@admin.register(models.Notice)
class NoticeAdmin(admin.ModelAdmin):
    list_display = ["created_at", "user", "text", "read"]
