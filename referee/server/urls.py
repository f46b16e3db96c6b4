"""The club server's routes: the organiser's admin and the club app's pages and API."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Club server: organiser"
admin.site.site_title = "Club server"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("referee.server.club.urls")),
]

handler500 = "referee.server.club.views.common.server_error"
