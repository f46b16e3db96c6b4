"""League secrets: one-way game seeds and opaque ids (R51), and a progress rate that ignores
start-up and resumed games."""

from __future__ import annotations

import hashlib

from referee.league.progress import Progress
from referee.league.schedule import make_schedule
from referee.util.seeds import (
    SECRET_BITS,
    RequestIds,
    draw_secret,
    keyed_seed,
    opaque_id,
    parse_secret,
    request_id,
    weak_secret_warning,
)


def test_game_seeds_follow_the_documented_keyed_blake2b():
    secret = 123456789012345678901234567890
    key = secret.to_bytes(32, "big")
    digest = hashlib.blake2b(b"lasvegas/secret/v1/game/7", key=key, digest_size=8).digest()
    assert keyed_seed(secret, "game", 7) == int.from_bytes(digest, "big")
    ident = hashlib.blake2b(b"lasvegas/secret/v1/id/game/7", key=key, digest_size=8).hexdigest()
    assert opaque_id(secret, "game", 7) == "g" + ident


def test_a_games_request_ids_are_the_documented_ones():
    """RequestIds (the referee's, its key made once per game) gives request_id's ids, which
    follow docs/replay-format.md: keyed BLAKE2b of "lasvegas/secret/v1/request/N", bit 62 set."""
    for seed in (0, 5, 2**64 - 1, 123456789012345678901234567890, 2**256 - 1):
        ids = RequestIds(seed)
        key = seed.to_bytes(32, "big")
        for index in (1, 2, 9, 137, 10**6):
            digest = hashlib.blake2b(f"lasvegas/secret/v1/request/{index}".encode(), key=key,
                                     digest_size=8).digest()
            expected = (1 << 62) | (int.from_bytes(digest, "big") >> 2)
            assert ids(index) == request_id(seed, index) == expected


def test_schedule_seeds_and_ids_reveal_nothing_of_the_secret():
    secret = draw_secret()
    assert 0 <= secret < 2**SECRET_BITS and draw_secret() != secret
    schedule = make_schedule(["a", "b", "c"], 6, 3, secret)
    ids = {game.game_id(secret) for game in schedule}
    assert len(ids) == 6
    for game in schedule:
        assert str(game.seed) not in game.game_id(secret)
        assert str(secret) not in game.game_id(secret)
    assert make_schedule(["a", "b", "c"], 6, 3, secret) == schedule


def test_duplicate_rotations_are_numbered_within_their_table():
    schedule = make_schedule(["a", "b", "c", "d"], 6, 3, 2**70, duplicate=True)
    assert [game.rotation for game in schedule] == [0, 1, 2, 0, 1, 2]
    assert len({game.seed for game in schedule[:3]}) == 1


def test_secrets_are_read_from_numbers_and_decimal_text():
    big = 2**100 + 7
    assert parse_secret(str(big), "f.toml: key 'seed'") == big
    assert parse_secret(5, "x") == 5
    assert weak_secret_warning(5) is not None and weak_secret_warning(2**64) is None


def test_progress_rate_starts_with_this_runs_first_game():
    now = [100.0]
    progress = Progress(clock=lambda: now[0])
    progress.start(total=110, done=100)       # 100 games recorded before a resume
    now[0] = 160.0                            # a minute of start-up before the first game
    progress.count()
    assert progress.rate() is None and progress.rate_text() == "rate: measuring"
    now[0] = 170.0
    for _ in range(4):
        progress.count()
    assert progress.rate() == 0.4             # 4 games in the 10 s after the first
    assert progress.eta() == 5 / 0.4
    assert progress.rate_text() == "0.4 games/s, ETA 12 s"
