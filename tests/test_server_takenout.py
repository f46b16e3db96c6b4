"""The organiser's word on a version the runner took out (referee.server.club.takenout): put
back only a version taken out, of a bot and owner still allowed to play, with no newer version
taking its place, in a season not closed; once put back it waits to enter again, its reason
cleared, its owner told. (The runner's part, on a real server: test_server_forfeits.py.)"""

from __future__ import annotations

import uuid

from server_support import club_django

club_django()

from django.contrib.auth.models import User  # noqa: E402
from django.test import Client  # noqa: E402

from referee.server.club.models import Bot, BotVersion, Competition, Notice  # noqa: E402
from referee.server.club.takenout import put_back, taken_out_versions  # noqa: E402
from referee.server.shared.clubfolder import ClubFolder  # noqa: E402

WHY = "taken out of the season: it forfeited 5 season games in a row; the last, game 7: ..."


def version_of(bot: Bot, number: int, **fields: object) -> BotVersion:
    return BotVersion.objects.create(
        bot=bot, number=number, archive_name="a.zip", archive_sha256="0" * 64, archive_size=1,
        folder=ClubFolder.version_folder(bot.name, number), spec="bot.toml",
        league_name=f"{bot.name}.v{number}", check_state="passed", **fields)


def taken_out_bot() -> tuple[User, Bot, BotVersion]:
    tag = uuid.uuid4().hex[:6]
    owner = User.objects.create_user(f"own{tag}", password="a long password 1")
    bot = Bot.objects.create(owner=owner, name=f"out-{tag}")
    return owner, bot, version_of(bot, 1, season_state="disabled", taken_out=True, error=WHY)


def test_a_taken_out_version_is_put_back_and_its_owner_told() -> None:
    owner, bot, version = taken_out_bot()
    assert version in taken_out_versions()
    done, line = put_back(version.pk)
    assert done, line
    version.refresh_from_db()
    assert (version.season_state, version.taken_out, version.error) == ("waiting", False, "")
    assert version not in taken_out_versions()
    told = Notice.objects.filter(user=owner, version=version).values_list("text", flat=True)
    assert [f"{bot.name} v1 is put back into the season by the organiser: it plays again from "
            f"the next round (it was {WHY})"] == list(told)
    # Once back it is no longer taken out: a second word changes nothing.
    assert put_back(version.pk) == (False, f"not put back: {bot.name} v1 is not taken out of "
                                           f"the season")


def test_put_back_is_refused_with_the_reason() -> None:
    _, bot, version = taken_out_bot()
    newer = version_of(bot, 2)   # waiting, its check passed: it takes the bot's place
    assert put_back(version.pk) == (False, f"not put back: {bot.name} v1 has a newer version, "
                                           f"v2, that takes its place")
    newer.check_state = "failed"   # a failed newer version never plays: no obstacle
    newer.save()
    Bot.objects.filter(pk=bot.pk).update(disabled=True)
    assert put_back(version.pk) == (False, f"not put back: {bot.name} is disabled: enable the "
                                           f"bot first")
    Bot.objects.filter(pk=bot.pk).update(disabled=False)
    other = version_of(Bot.objects.create(owner=bot.owner, name=f"x{bot.name}"), 1,
                       season_state="disabled")   # disabled by its bot, not taken out
    assert put_back(other.pk)[0] is False
    state = Competition.first().state
    Competition.first_row().update(state="closed")
    try:
        assert put_back(version.pk) == (False, "not put back: the season is closed")
    finally:
        Competition.first_row().update(state=state)
    version.refresh_from_db()
    assert (version.season_state, version.taken_out) == ("disabled", True)
    assert put_back(version.pk)[0] is True


def test_the_organisers_button_puts_it_back_and_leads_back_to_its_page() -> None:
    owner, bot, version = taken_out_bot()
    student = Client()
    student.force_login(owner)
    page = student.get(f"/bots/{bot.name}/").content.decode()
    assert WHY.split(": ...")[0] in page and "put-back" not in page   # the reason, no button
    organiser = User.objects.create_superuser(f"org{uuid.uuid4().hex[:6]}", password="x" * 12)
    client = Client()
    client.force_login(organiser)
    assert f"/organiser/versions/{version.pk}/put-back" in client.get(
        f"/bots/{bot.name}/").content.decode()
    answer = client.post(f"/organiser/versions/{version.pk}/put-back", {"back": "bot"})
    assert answer.status_code == 302 and answer["Location"] == f"/bots/{bot.name}/"
    version.refresh_from_db()
    assert version.season_state == "waiting"
    page = client.get(f"/bots/{bot.name}/").content.decode()
    assert f"/organiser/versions/{version.pk}/put-back" not in page
    assert "is put back: it enters the season again between rounds" in page
