"""Django's SQLite backend with the club's database connections pooled (referee.server.pool)."""
