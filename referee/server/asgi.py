"""The ASGI application of the club server, served by uvicorn (`referee serve` starts it)."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "referee.server.settings")
django_application = get_asgi_application()

from referee.server.bodycap import BodyCap  # noqa: E402 (after Django is set up)
from referee.server.shared.seasonread import server_limits  # noqa: E402

application = BodyCap(django_application, lambda: server_limits().upload_max_bytes)
