"""Sign-in: one way to look a name up, and one set of limits on guessing, for every form that
takes a password (the club's /login/, the admin's /admin/login/, and any form that calls
Django's `authenticate`).

The limits live in the authentication backend, so no sign-in form can miss them. They count
failed sign-ins an hour (referee.server.club.ratecount: atomic counters in the database) in
buckets keyed on the name as it is looked up (`sign_in_name`):

- per address, whatever the names (one machine guessing many accounts);
- per (name, address) (one machine guessing one account);
- per name, from browsers new to it (many machines guessing one account).

A browser that did sign in as a name carries a signed cookie saying so (with a random id of
its own) and is held by none of these three for that name, only by its own bucket: failures
for that name from that browser, as many as per (name, address). So neither a stranger nor
a classmate behind the room's one address can keep the owner out of their account from a
browser they signed in on before; and guessing with such a cookie is bounded too (it is only
made at a right sign-in, and it is signed with the server's key).

The season file sets the three numbers (sign_in_failures_per_address, ..._per_name_and_address,
..._per_name; 30, 10 and 50 by default).

An attempt is counted before its password is checked (in every bucket at once, or in none when
one is full: the answer is then 429, one line, and the password is not checked), and given back
if the password was right: a hundred wrong passwords sent at once meet the limit one by one.
"""

from __future__ import annotations

import secrets
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.core import signing
from django.http import HttpRequest, HttpResponse

from referee.server.club import ratecount
from referee.server.club.refusal import refusal
from referee.server.shared.seasonread import server_limits

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


def _address(request: HttpRequest | None) -> str:
    return (request.META.get("REMOTE_ADDR", "") if request is not None else "") or "unknown"


def _device(request: HttpRequest | None) -> tuple[str, list[str]]:
    """This browser's device id and the names it signed in as (its signed cookie), or
    ("", [])."""
    value = request.COOKIES.get(DEVICE_COOKIE, "") if request is not None else ""
    try:
        data = signing.loads(value, salt=DEVICE_SALT, max_age=DEVICE_MAX_AGE_S)
        device, names = data["device"], data["names"]
    except (signing.BadSignature, KeyError, TypeError):
        return "", []
    if not isinstance(device, str) or not device or not isinstance(names, list):
        return "", []
    return device, [n for n in names if isinstance(n, str)]


def buckets(request: HttpRequest | None, name: str) -> list[ratecount.Bucket]:
    """The failure counts that hold one sign-in attempt of `name` from `request`."""
    address, limits = _address(request), server_limits()
    device, names = _device(request)
    if name in names:   # a browser that signed in as this name: held by its own bucket only
        return [ratecount.Bucket(ratecount.key("signin-device", device, name),
                                 limits.sign_in_failures_per_name_and_address,
                                 why=_WHY["device"])]
    return [
        ratecount.Bucket(ratecount.key("signin-address", address),
                         limits.sign_in_failures_per_address, why=_WHY["address"]),
        ratecount.Bucket(ratecount.key("signin-pair", name, address),
                         limits.sign_in_failures_per_name_and_address, why=_WHY["pair"]),
        ratecount.Bucket(ratecount.key("signin-name", name),
                         limits.sign_in_failures_per_name, why=_WHY["account"]),
    ]


_WHY = {
    "address": "too many failed sign-ins from your address ({most} an hour); wait and try again",
    "pair": "too many failed sign-ins for this name from your address ({most} an hour); wait "
            "and try again",
    "account": "too many failed sign-ins for this name from new browsers ({most} an hour); "
               "sign in from a browser you used before, or wait",
    "device": "too many failed sign-ins for this name from this browser ({most} an hour); "
              "wait and try again",
}


class ClubBackend(ModelBackend):
    """Django's password check, with the name looked up by `sign_in_name` and the limits of
    this module; every sign-in form of the server goes through it."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> User | None:
        if username is None or password is None:
            return None
        name = sign_in_name(username)
        held = buckets(request, name)
        ratecount.take(held)   # counted as failed until the password is found right
        user = find_user(name)
        if user is None:
            User().set_password(password)   # as long as a real check: no name is revealed
        elif user.check_password(password) and self.user_can_authenticate(user):
            for bucket in held:
                ratecount.give_back(bucket)
            remember_browser(request, name)
            return user
        return None


def remember_browser(request: HttpRequest | None, name: str) -> None:
    """Have the middleware give this browser (signed in as `name` just now) the cookie that
    makes it known to that name's limits."""
    if request is not None:
        request.club_signed_in_as = name


class SignInMiddleware:
    """Answers every rate limit's TooMany with 429 (one line) and gives a browser that signed
    in the signed cookie that makes it known to its names' limits."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        name = getattr(request, "club_signed_in_as", None)
        if name:
            device, known = _device(request)
            names = [name, *(n for n in known if n != name)][:DEVICE_NAMES]
            value = signing.dumps({"device": device or secrets.token_urlsafe(18),
                                   "names": names}, salt=DEVICE_SALT)
            response.set_cookie(DEVICE_COOKIE, value, max_age=DEVICE_MAX_AGE_S, httponly=True,
                                samesite="Lax", secure=settings.SESSION_COOKIE_SECURE)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, ratecount.TooMany):
            return refusal(request, str(exception), 429)
        return None
