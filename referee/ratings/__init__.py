"""Ratings: numbers in, numbers out. TrueSkill, the order-free global fit, its intervals and
the gauntlet's sequential test, used by leagues, the gauntlet and the club server."""
