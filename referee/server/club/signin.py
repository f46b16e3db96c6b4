"""Sign-in: one way to look a name up, and one set of limits on guessing, for every form that
takes a password (the club's /login/, the admin's /admin/login/, and any form that calls
Django's `authenticate`).

The limits live in the authentication backend, so no sign-in form can miss them. They count
failed sign-ins an hour in buckets keyed on the name as it is looked up (`sign_in_name`):

- per address, whatever the names (one machine guessing many accounts);
- per (name, address) (one machine guessing one account);
- per name, from browsers that never signed in as that name (many machines guessing one
  account). A browser that did sign in as that name carries a signed cookie saying so and is
  not held by this bucket, so strangers cannot use it to keep the owner out.

The season file sets the three (sign_in_failures_per_address, ..._per_name_and_address,
..._per_name; 30, 10 and 50 by default).

A stranger's failures fill only the stranger's own address buckets and the name's bucket: the
owner, from another address or from a browser they signed in on before, still gets in with the
right password. Over a limit, the password is not even checked: the answer is 429, one line.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.core import signing
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

from referee.errors import UserError
from referee.server.club.limits import server_limits

WINDOW_S = 3600
DEVICE_COOKIE = "club_device"
DEVICE_SALT = "referee.club.device"
DEVICE_MAX_AGE_S = 180 * 24 * 3600
DEVICE_NAMES = 8        # names one browser remembers signing in as


def sign_in_name(raw: str) -> str:
    """The name as sign-in looks it up and counts it: compatibility forms folded (full-width
    letters become plain ones), spaces around it dropped, case folded. Join keeps display
    names unique by this same folding, so it names one account at most."""
    return unicodedata.normalize("NFKC", raw).strip().casefold()[:150]


def find_user(name: str) -> User | None:
    """The account `name` signs in to (`name` as `sign_in_name` gives it), or None."""
    return User.objects.filter(username__iexact=name).order_by("pk").first()


class SignInRefused(UserError):
    """Too many failed sign-ins: the one line the client gets with status 429."""


def _address(request: HttpRequest | None) -> str:
    return (request.META.get("REMOTE_ADDR", "") if request is not None else "") or "unknown"


def _key(*parts: str) -> str:
    """A cache key for a bucket in this hour's window (names hashed: any text is a key)."""
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]
    return f"signin:{digest}:{int(time.time() // WINDOW_S)}"


def known_names(request: HttpRequest | None) -> list[str]:
    """The names this browser signed in as (from its signed device cookie), or []."""
    value = request.COOKIES.get(DEVICE_COOKIE, "") if request is not None else ""
    try:
        names = signing.loads(value, salt=DEVICE_SALT, max_age=DEVICE_MAX_AGE_S)["names"]
    except (signing.BadSignature, KeyError, TypeError):
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


class Buckets:
    """The failure counts that hold one sign-in attempt of `name` from `request`."""

    def __init__(self, request: HttpRequest | None, name: str) -> None:
        address, limits = _address(request), server_limits()
        self.counts = {
            "address": (_key("address", address), limits.sign_in_failures_per_address),
            "pair": (_key("pair", name, address), limits.sign_in_failures_per_name_and_address),
        }
        if name not in known_names(request):
            self.counts["account"] = (_key("account", name), limits.sign_in_failures_per_name)

    def refuse_if_over(self) -> None:
        """SignInRefused, one line, if any bucket is full."""
        for kind, (key, most) in self.counts.items():
            if cache.get(key, 0) >= most:
                raise SignInRefused(_WHY[kind].format(most=most))

    def failed(self) -> None:
        """Count one failed sign-in in every bucket. (Sync views run on one thread of the one
        web process: the read and the write are not raced.)"""
        for key, _most in self.counts.values():
            cache.set(key, cache.get(key, 0) + 1, WINDOW_S + 60)


_WHY = {
    "address": "too many failed sign-ins from your address ({most} an hour); wait and try again",
    "pair": "too many failed sign-ins for this name from your address ({most} an hour); wait "
            "and try again",
    "account": "too many failed sign-ins for this name from new browsers ({most} an hour); "
               "sign in from a browser you used before, or wait",
}


class ClubBackend(ModelBackend):
    """Django's password check, with the name looked up by `sign_in_name` and the limits of
    this module; every sign-in form of the server goes through it."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> User | None:
        if username is None or password is None:
            return None
        name = sign_in_name(username)
        buckets = Buckets(request, name)
        buckets.refuse_if_over()
        user = find_user(name)
        if user is None:
            User().set_password(password)   # as long as a real check: no name is revealed
        elif user.check_password(password) and self.user_can_authenticate(user):
            if request is not None:
                request.club_signed_in_as = name   # the middleware remembers this browser
            return user
        buckets.failed()
        return None


class SignInMiddleware:
    """Answers SignInRefused with 429 (one line) and gives a browser that signed in the signed
    cookie that exempts it from its names' account bucket."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        name = getattr(request, "club_signed_in_as", None)
        if name:
            names = [name, *(n for n in known_names(request) if n != name)][:DEVICE_NAMES]
            value = signing.dumps({"names": names}, salt=DEVICE_SALT)
            response.set_cookie(DEVICE_COOKIE, value, max_age=DEVICE_MAX_AGE_S, httponly=True,
                                samesite="Lax", secure=settings.SESSION_COOKIE_SECURE)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, SignInRefused):
            from referee.server.club.views.common import refusal
            return refusal(request, str(exception), 429)
        return None
