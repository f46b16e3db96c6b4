"""Joining with a code, signing in (rate-limited) and personal API tokens."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView, PasswordChangeView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render, resolve_url
from django.utils import timezone
from django.views.decorators.http import require_POST

from referee.server.club.forms import JoinForm
from referee.server.club.models import TOKEN_LIFETIME, ApiToken
from referee.server.club.people import (
    JoinRefused,
    is_organiser,
    join,
    live_tokens,
    new_token,
    revoke_token,
)
from referee.server.club.services import over_limit
from referee.server.club.signin import remember_browser, sign_in_name
from referee.server.club.views.common import rate_limited
from referee.server.shared.seasonread import server_limits

JOINS_PER_ADDRESS = 20   # an hour


def join_view(request: HttpRequest) -> HttpResponse:
    """A student makes an account with the organiser's join code (no e-mail address)."""
    form = JoinForm(request.POST or None)
    if request.method == "POST":
        if over_limit("join", request.META.get("REMOTE_ADDR", ""), JOINS_PER_ADDRESS):
            return rate_limited(request)
        if form.is_valid():
            data = form.cleaned_data
            if data["password"] != data["password_again"]:
                form.add_error("password_again", "the two passwords differ")
            else:
                try:
                    user = join(data["code"], data["display_name"], data["password"],
                                server_limits().max_bots_per_student)
                except JoinRefused as exc:
                    form.add_error(None, str(exc))
                else:
                    login(request, user, backend="referee.server.club.signin.ClubBackend")
                    remember_browser(request, sign_in_name(user.username))
                    messages.success(request, f"Welcome, {user.username}. Upload your first "
                                              f"bot below.")
                    return redirect("club:home")
    return render(request, "club/join.html", {"form": form})


class ClubLoginView(LoginView):
    """Django's sign-in; its limits on guessing are those of every sign-in form, in the
    authentication backend (referee.server.club.signin)."""

    template_name = "club/login.html"
    redirect_authenticated_user = True

    def get_default_redirect_url(self) -> str:
        """Where a sign-in without `next` lands: the organiser on their page, a student on
        My bots."""
        if is_organiser(self.request.user):
            return resolve_url("club:organiser")
        return super().get_default_redirect_url()

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        """The page, with a way to the public board for a spectator while it is open."""
        from referee.server.club.views.season import public_switch

        return {**super().get_context_data(**kwargs), "public_board": public_switch()}


class ClubPasswordChangeView(PasswordChangeView):
    """Django's password change; the new password revokes the user's API tokens
    (`referee.server.club.signals`), and the page says so."""

    template_name = "club/password.html"
    success_url = "/"

    def form_valid(self, form: forms.Form) -> HttpResponse:
        revoked = self.request.user.tokens.filter(revoked_at__isnull=True).count()
        answer = super().form_valid(form)
        messages.success(self.request, "Password changed." + (
            f" Your {revoked} API token{'s are' if revoked != 1 else ' is'} revoked: make a "
            f"new one on the Tokens page for referee submit." if revoked else ""))
        return answer


@login_required
def tokens_view(request: HttpRequest) -> HttpResponse:
    """The user's personal tokens for `referee submit`; a new one is shown once."""
    return _tokens_page(request, None)


def _tokens_page(request: HttpRequest, new: str | None) -> HttpResponse:
    tokens = request.user.tokens.order_by("-created_at")
    return render(request, "club/tokens.html", {"tokens": tokens, "new_token": new,
                                                "now": timezone.now(),
                                                "lifetime_days": TOKEN_LIFETIME.days})


@login_required
@require_POST
def token_new(request: HttpRequest) -> HttpResponse:
    if live_tokens(request.user) >= 10:
        messages.error(request, "you have 10 tokens; revoke one first")
        return redirect("club:tokens")
    token, _row = new_token(request.user)
    # Shown in this answer only: the token is never stored (not even in the session).
    return _tokens_page(request, token)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    get_object_or_404(ApiToken, pk=token_id, user=request.user)   # others' tokens: 404
    if revoke_token(request.user, token_id):
        messages.success(request, "token revoked: it no longer works")
    else:
        messages.error(request, "that token is revoked already")
    return redirect("club:tokens")
