"""The club app's routes. Every route has an access rule in tests/test_server_routes.py."""

from __future__ import annotations

from django.contrib.auth.views import LogoutView, PasswordChangeView
from django.urls import path

from referee.server.club.views import accounts, api, organiser, pages

app_name = "club"

urlpatterns = [
    path("", pages.home, name="home"),
    path("join/", accounts.join_view, name="join"),
    path("login/", accounts.ClubLoginView.as_view(), name="login"),
    path("logout/", LogoutView.as_view(), name="logout"),
    path("password/", PasswordChangeView.as_view(
        template_name="club/password.html", success_url="/?password=changed"),
        name="password"),
    path("tokens/", accounts.tokens_view, name="tokens"),
    path("tokens/new", accounts.token_new, name="token-new"),
    path("tokens/<int:token_id>/revoke", accounts.token_revoke, name="token-revoke"),
    path("upload", pages.upload, name="upload"),
    path("leaderboard/", pages.leaderboard, name="leaderboard"),
    path("leaderboard.json", pages.leaderboard_json, name="leaderboard-json"),
    path("bots/<str:name>/", pages.bot_page, name="bot"),
    path("versions/<int:version_id>/", pages.version_page, name="version"),
    path("versions/<int:version_id>/download", pages.download, name="download"),
    path("games/<int:index>/", pages.game_page, name="game"),
    path("games/<int:index>/viewer", pages.game_viewer, name="game-viewer"),
    path("testgames/", pages.test_games, name="testgames"),
    path("testgames/<int:game_id>/", pages.test_game_page, name="testgame"),
    path("testgames/<int:game_id>/viewer", pages.test_game_viewer, name="testgame-viewer"),
    path("api/submit", api.submit, name="api-submit"),
    path("api/versions/<int:version_id>", api.version_status, name="api-version"),
    path("organiser/", organiser.organiser, name="organiser"),
    path("organiser/season/<str:action>", organiser.season_action, name="season-action"),
    path("organiser/codes/new", organiser.join_code_new, name="code-new"),
    path("organiser/codes/<int:code_id>/withdraw", organiser.join_code_withdraw,
         name="code-withdraw"),
    path("organiser/bots/<int:bot_id>/disable", organiser.bot_disable, name="bot-disable"),
    path("organiser/report/", organiser.season_report, name="report"),
    path("organiser/report/<path:path>", organiser.season_report, name="report-file"),
]
