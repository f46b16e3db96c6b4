"""The forms a student submits: joining the club, an upload, a test game, a game in the
browser. Each says which versions the student may choose; club.services does what they ask."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.db.models import Q, QuerySet

from referee.server.club.models import BotVersion
from referee.server.shared.seasonread import play_against_students

MAX_TEST_OPPONENTS = 7      # a table of eight at most, the student's version included
MAX_BROWSER_OPPONENTS = 4   # a table of five at most, the player's seat included


class JoinForm(forms.Form):
    """An account made with the organiser's join code (no e-mail address)."""

    code = forms.CharField(max_length=32, label="Join code")
    display_name = forms.CharField(max_length=40, label="Display name",
                                   help_text="2 to 40 letters, digits, '.', '_' or '-'; "
                                             "you sign in with it")
    password = forms.CharField(widget=forms.PasswordInput, max_length=128)
    password_again = forms.CharField(widget=forms.PasswordInput, max_length=128,
                                     label="Password again")


class UploadForm(forms.Form):
    """A bot's archive, under one of the student's bots or a new name."""


    bot = forms.CharField(max_length=32, required=False, label="Bot name",
                          help_text="one of your bots, or a new name; empty: the spec's name")
    archive = forms.FileField(label="Bot archive",
                              help_text="a zip or tar.gz of your bot's spec and the folder it "
                                        "names (zip -r mybot.zip mybot.toml mybot), or a "
                                        "container image archive (podman save)")


class OpponentChoice(forms.ModelMultipleChoiceField):
    """Season bots by league name and owner (`mine.v2 (ann)`), the house bots marked
    `(house)`: students' bots share names the guides give them."""

    def label_from_instance(self, obj: BotVersion) -> str:
        return obj.with_owner


def chosen_count(chosen: Any, most: int) -> Any:
    """The opponents chosen, if 1 to `most` of them; a form error otherwise."""
    if not 1 <= len(chosen) <= most:
        raise forms.ValidationError(f"choose 1 to {most} opponents")
    return chosen


class TestGameForm(forms.Form):
    """A test game: one of the student's versions against season bots they choose."""

    __test__ = False
    version = forms.ModelChoiceField(queryset=BotVersion.objects.none(), label="Your version")
    opponents = OpponentChoice(queryset=BotVersion.objects.none(),
                               label="Opponents (season bots, house bots included)")

    def __init__(self, user: User, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A retired version's built folder is removed (club.diskuse): it plays no more games.
        self.fields["version"].queryset = BotVersion.objects.filter(
            bot__owner=user, check_state=BotVersion.PASSED, bot__disabled=False).exclude(
            season_state=BotVersion.RETIRED)
        self.fields["opponents"].queryset = BotVersion.objects.select_related(
            "bot__owner").filter(season_state=BotVersion.ACTIVE, bot__disabled=False)

    def clean_opponents(self) -> Any:
        return chosen_count(self.cleaned_data["opponents"], MAX_TEST_OPPONENTS)


def browser_opponents(user: User) -> QuerySet[BotVersion]:
    """The versions `user` may play against in the browser: their own that passed their check
    and are not retired, the house bots in the season and, where the organiser allows
    (`play_against_students`), the other students' current (active) versions."""
    mine = Q(bot__owner=user, check_state=BotVersion.PASSED) & ~Q(
        season_state=BotVersion.RETIRED)   # its built folder is removed (club.diskuse)
    house = Q(bot__house=True, season_state=BotVersion.ACTIVE)
    allowed = mine | house
    if play_against_students():
        allowed |= Q(season_state=BotVersion.ACTIVE)
    return (BotVersion.objects.select_related("bot__owner").filter(allowed, bot__disabled=False)
            .order_by("bot__name", "number"))


class BrowserGameForm(forms.Form):
    """A game in the browser: the opponents the student plays against."""

    opponents = OpponentChoice(queryset=BotVersion.objects.none(), label="Opponents")

    def __init__(self, user: User, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["opponents"].queryset = browser_opponents(user)

    def clean_opponents(self) -> Any:
        return chosen_count(self.cleaned_data["opponents"], MAX_BROWSER_OPPONENTS)
