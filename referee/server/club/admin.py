"""The organiser's admin: every club record, with the actions a season needs."""

from __future__ import annotations

from django.contrib import admin

from referee.server.club import models


@admin.register(models.Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ["display_name", "user", "max_bots"]
    list_editable = ["max_bots"]
    search_fields = ["display_name", "user__username"]


@admin.register(models.JoinCode)
class JoinCodeAdmin(admin.ModelAdmin):
    list_display = ["code", "note", "uses", "max_uses", "active", "created_at"]
    list_editable = ["active"]


@admin.register(models.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["token_hash", "prefix", "created_at", "last_used_at"]


@admin.register(models.Season)
class SeasonAdmin(admin.ModelAdmin):
    list_display = ["name", "state", "updated_at", "closed_at", "report_path"]


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
