"""The club server: accounts, submissions, checks and a season that never stops.

The web process (Django on ASGI, `referee.server.asgi`) reads and writes the club's database and
never plays a game or runs a build; the season runner (`referee.server.runner`) does those.
Both find their data folder through the environment variable REFEREE_SERVER_DATA, and share
what they both need through `referee.server.shared` (docs/architecture.md).
"""
