"""The ASGI application of the club server, served by uvicorn (`referee serve` starts it)."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "referee.server.settings")
application = get_asgi_application()
