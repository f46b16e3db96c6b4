"""referee: a tournament runner for bots that play Las Vegas."""

__version__ = "0.1.0"
