"""Students, join codes and personal API tokens (only a token's sha256 is stored)."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from referee.errors import UserError
from referee.server.club.models import TOKEN_LIFETIME, ApiToken, JoinCode, Profile
from referee.server.club.signin import find_user, sign_in_name

DISPLAY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{1,39}\Z")
TOKEN_PREFIX = "rt_"
TOKEN_USE_STEP = timedelta(hours=1)   # a token's last use is written at most this often


class JoinRefused(UserError, ValueError):
    """A join that cannot make an account; the message is one line for the student."""


def is_organiser(user: User) -> bool:
    """The organiser is the superuser (`referee serve` makes one on first start)."""
    return bool(user.is_authenticated and user.is_active and user.is_superuser)


def make_join_code(note: str = "", max_uses: int = 50) -> JoinCode:
    """A new random join code (easy to read out in a club room: no 0/O or 1/l)."""
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    code = "-".join("".join(secrets.choice(alphabet) for _ in range(4)) for _ in range(3))
    return JoinCode.objects.create(code=code, note=note[:100], max_uses=max_uses)


def join(code: str, display_name: str, password: str, max_bots: int) -> User:
    """Make a student account with a join code; JoinRefused (one line) if it cannot be made."""
    if not DISPLAY_NAME.match(display_name):
        raise JoinRefused("a display name is 2 to 40 letters, digits, '.', '_' or '-', "
                          "starting with a letter or digit")
    try:
        validate_password(password, User(username=display_name))
    except ValidationError as exc:
        raise JoinRefused(" ".join(exc.messages)) from None
    with transaction.atomic():
        # The code first: without a good one nobody learns whether a name is taken. One UPDATE
        # that only counts a use while the code is active and has uses left; a refusal below
        # rolls the use back with the transaction.
        used = JoinCode.objects.filter(code=code.strip().lower(), active=True,
                                       uses__lt=F("max_uses")).update(uses=F("uses") + 1)
        if not used:
            raise JoinRefused("that join code is unknown, used up or withdrawn; ask the "
                              "organiser for a new one")
        # Taken as sign-in would find it: no two accounts fold to one name.
        taken = (find_user(sign_in_name(display_name)) is not None
                 or Profile.objects.filter(display_name__iexact=display_name).exists())
        if taken:
            raise JoinRefused(f"the display name {display_name!r} is taken; pick another")
        try:
            user = User.objects.create_user(username=display_name, password=password)
        except IntegrityError:
            raise JoinRefused(f"the display name {display_name!r} is taken; pick another") \
                from None
        Profile.objects.create(user=user, display_name=display_name, max_bots=max_bots)
    return user


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token(user: User) -> tuple[str, ApiToken]:
    """A new personal token: the token itself (shown once) and its stored row."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(user=user, token_hash=token_hash(token), prefix=token[:8])
    return token, row


def user_for_token(token: str) -> User | None:
    """The active user a token belongs to, or None (unknown, revoked, expired, or the user
    disabled)."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    row = (ApiToken.objects.select_related("user")
           .filter(token_hash=token_hash(token), revoked_at__isnull=True,
                   created_at__gt=timezone.now() - TOKEN_LIFETIME).first())
    if row is None or not row.user.is_active:
        return None
    now = timezone.now()
    # Reads write nothing: a token's last use is written once an hour at most (the Tokens
    # page's "last used" may be up to an hour behind).
    if row.last_used_at is None or now - row.last_used_at >= TOKEN_USE_STEP:
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row.user


def live_tokens(user: User) -> int:
    """How many of the user's tokens work: not revoked, not expired."""
    return user.tokens.filter(revoked_at__isnull=True,
                              created_at__gt=timezone.now() - TOKEN_LIFETIME).count()


def revoke_token(user: User, token_id: int) -> bool:
    """Revoke one of the user's tokens; False if it is not theirs or is revoked already."""
    return bool(ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True)
                .update(revoked_at=timezone.now()))
