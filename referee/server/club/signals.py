"""What follows from changes to accounts, whichever page, form or command makes them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone

from referee.server.club.models import ApiToken


@receiver(post_save, sender=get_user_model())
def revoke_tokens_on_new_password(sender: Any, instance: Any, created: bool,
                                  update_fields: Any = None, **_kwargs: Any) -> None:
    """A new password, or none (the admin's "disable password-based authentication"), revokes
    the user's API tokens: whoever knew the old password may have made a token with it, and a
    token would outlive the password otherwise.

    Django marks a password set with `set_password` (the Password page, the admin's form,
    `manage.py changepassword`) in `_password` until the save is done; the rehash of an
    unchanged password at sign-in clears that mark before it saves, so it revokes nothing."""
    if created or (update_fields is not None and "password" not in update_fields):
        return
    if getattr(instance, "_password", None) is None and instance.has_usable_password():
        return
    ApiToken.objects.filter(user=instance, revoked_at__isnull=True).update(
        revoked_at=timezone.now())


@receiver(post_save, sender=get_user_model())
def revoke_tokens_when_disabled(sender: Any, instance: Any, created: bool,
                                update_fields: Any = None, **_kwargs: Any) -> None:
    """A disabled account (the admin's *active* unticked) loses its API tokens for good:
    ticking *active* again brings none back, the student makes new ones. (A deleted account's
    tokens go with it.)"""
    if instance.is_active or (update_fields is not None and "is_active" not in update_fields):
        return
    ApiToken.objects.filter(user=instance, revoked_at__isnull=True).update(
        revoked_at=timezone.now())
