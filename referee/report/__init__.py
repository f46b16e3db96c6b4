"""Reading a league's records back: show, export and verify games, and the static HTML report
with its replay viewer. Everything here reads stored records and never plays a game."""
