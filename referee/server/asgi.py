"""The ASGI application of the club server, served by uvicorn (`referee serve` starts it)."""

from __future__ import annotations

import os
import tempfile

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "referee.server.settings")
django_application = get_asgi_application()

from django.conf import settings  # noqa: E402

from referee.server.bodycap import BodyCap  # noqa: E402 (after Django is set up)
from referee.server.club.limits import server_limits  # noqa: E402

# Django spools a request's body past FILE_UPLOAD_MAX_MEMORY_SIZE to an unnamed temporary file:
# in the data folder's tmp, on the disk whose filling the server reports (507), not the host's
# /tmp. Set here, in the web process only.
tempfile.tempdir = settings.FILE_UPLOAD_TEMP_DIR

application = BodyCap(django_application, lambda: server_limits().upload_max_bytes)
