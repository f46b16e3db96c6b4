"""Django's SQLite backend whose connections outlive the request's thread.

Settings name it as the database ENGINE (`referee.server.sqlitepool`). A connection Django
closes (at the end of every request, CONN_MAX_AGE being 0) goes back to the process's pool,
its transaction rolled back if one was left open; the next request's thread takes it instead
of opening the file again. Everything else is Django's own backend.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from django.db.backends.sqlite3 import base

from referee.server.pool import Pool

POOL: Pool[sqlite3.Connection] = Pool(sqlite3.Connection.close)


class DatabaseWrapper(base.DatabaseWrapper):
    """Django's SQLite wrapper, taking and giving back pooled connections."""

    def _pooled(self) -> bool:
        return not self.is_in_memory_db()

    def get_new_connection(self, conn_params: dict[str, Any]) -> sqlite3.Connection:
        if self._pooled():
            kept = POOL.take(str(self.settings_dict["NAME"]))
            if kept is not None:
                return kept
        return super().get_new_connection(conn_params)

    def _close(self) -> None:
        connection = self.connection
        if connection is None or not self._pooled():
            super()._close()
            return
        with self.wrap_database_errors:
            if connection.in_transaction:   # never hand a transaction on
                connection.rollback()
            POOL.give(str(self.settings_dict["NAME"]), connection)
