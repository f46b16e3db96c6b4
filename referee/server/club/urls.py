"""The club app's routes. Every route has an access rule in tests/test_server_routes.py."""

from __future__ import annotations

from django.contrib.auth.views import LogoutView
from django.urls import path, register_converter

from referee.server.club.views import (
    accounts,
    api,
    browsergames,
    competitions,
    live,
    organiser,
    pages,
    results,
    season,
)


class IdConverter:
    """A database id in a URL: 1 to 18 digits. Every id fits SQLite's 64-bit integers, so a
    longer one is no page (404) instead of reaching a query that cannot take it (500)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")

app_name = "club"

urlpatterns = [
    path("", pages.home, name="home"),
    path("join/", accounts.join_view, name="join"),
    path("login/", accounts.ClubLoginView.as_view(), name="login"),
    path("logout/", LogoutView.as_view(), name="logout"),
    path("password/", accounts.ClubPasswordChangeView.as_view(), name="password"),
    path("tokens/", accounts.tokens_view, name="tokens"),
    path("tokens/new", accounts.token_new, name="token-new"),
    path("tokens/<id:token_id>/revoke", accounts.token_revoke, name="token-revoke"),
    path("upload", pages.upload, name="upload"),
    path("leaderboard/", pages.leaderboard, name="leaderboard"),
    path("leaderboard.json", pages.leaderboard_json, name="leaderboard-json"),
    path("season/", season.season_page, name="season"),
    path("c/<slug:slug>/", competitions.board, name="competition"),
    path("c/<slug:slug>/leaderboard.json", competitions.board_json, name="competition-json"),
    path("c/<slug:slug>/season/", competitions.season_page, name="competition-season"),
    path("c/<slug:slug>/report/", competitions.report, name="competition-report"),
    path("c/<slug:slug>/report/<path:path>", competitions.report, name="competition-report-file"),
    path("bots/<str:name>/enter/<id:competition_id>", competitions.bot_enter,
         name="bot-enter"),
    path("bots/<str:name>/withdraw/<id:competition_id>", competitions.bot_withdraw,
         name="bot-withdraw"),
    path("bots/<str:name>/", pages.bot_page, name="bot"),
    path("versions/<id:version_id>/", pages.version_page, name="version"),
    path("versions/<id:version_id>/download", pages.download, name="download"),
    path("games/<id:index>/", pages.game_page, name="game"),
    path("games/<id:index>/viewer", pages.game_viewer, name="game-viewer"),
    path("games/<id:index>/live", live.season_stream, name="game-live"),
    path("games/<id:index>/watch", live.season_watch, name="game-watch"),
    path("games/live.json", live.in_play_json, name="games-live"),
    path("games/newest.json", live.newest_json, name="games-newest"),
    path("games/live", live.season_follow, name="season-live"),
    path("games/live/watch", live.season_follow_watch, name="season-watch"),
    path("testgames/", pages.test_games, name="testgames"),
    path("testgames/<id:game_id>/", pages.test_game_page, name="testgame"),
    path("testgames/<id:game_id>/part", pages.test_game_part, name="testgame-part"),
    path("testgames/<id:game_id>/viewer", pages.test_game_viewer, name="testgame-viewer"),
    path("testgames/<id:game_id>/live", live.test_stream, name="testgame-live"),
    path("testgames/<id:game_id>/watch", live.test_watch, name="testgame-watch"),
    path("play/", browsergames.play_games, name="play"),
    path("play/<id:play_id>/", browsergames.play_page, name="play-game"),
    path("play/<id:play_id>/state", browsergames.play_state, name="play-state"),
    path("play/<id:play_id>/answer", browsergames.play_answer, name="play-answer"),
    path("play/<id:play_id>/viewer", browsergames.play_viewer, name="play-viewer"),
    path("api/submit", api.submit, name="api-submit"),
    path("api/versions/<id:version_id>", api.version_status, name="api-version"),
    path("api/leaderboard", results.leaderboard, name="api-leaderboard"),
    path("api/bots/<id:bot_id>/games", results.bot_games, name="api-bot-games"),
    path("api/games/<id:index>", results.game, name="api-game"),
    path("organiser/", organiser.organiser, name="organiser"),
    path("organiser/season/<str:action>", organiser.season_action, name="season-action"),
    path("organiser/screen/", live.screen, name="screen"),
    path("organiser/competitions/new", competitions.competition_new, name="competition-new"),
    path("organiser/competitions/<id:competition_id>/<str:action>",
         competitions.competition_action, name="competition-action"),
    path("organiser/settings", season.season_settings, name="season-settings"),
    path("organiser/messages/new", organiser.message_new, name="message-new"),
    path("organiser/messages/<id:message_id>/remove", organiser.message_remove,
         name="message-remove"),
    path("organiser/codes/new", organiser.join_code_new, name="code-new"),
    path("organiser/codes/<id:code_id>/withdraw", organiser.join_code_withdraw,
         name="code-withdraw"),
    path("organiser/bots/<id:bot_id>/disable", organiser.bot_disable, name="bot-disable"),
    path("organiser/versions/<id:version_id>/put-back", organiser.version_put_back,
         name="put-back"),
    path("organiser/report/", organiser.season_report, name="report"),
    path("organiser/report/<path:path>", organiser.season_report, name="report-file"),
]
