"""Checking a bot: the conformance report of `referee check` (conformance), and a check run in
its own guarded process for the club (isolated)."""
