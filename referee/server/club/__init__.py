"""The club app (label `club`): people, bots, versions, checks, test games, standings."""
