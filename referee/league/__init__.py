"""Leagues: fair schedules, concurrent games, durable results, ratings and tables."""
