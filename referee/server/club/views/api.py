"""The API `referee submit` uses: an upload with a personal token, then the check's lines."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from referee.server.club import services
from referee.server.club.models import BotVersion
from referee.server.club.uploads import UploadRefused
from referee.server.club.views.common import api_user, own_version, refusal, token_user
from referee.server.club.views.pages import content_length, shown_line
from referee.server.shared.seasonread import server_limits
from referee.util.numbers import NumberError, whole_number

CHUNK = 1 << 16


def version_json(version: BotVersion, after: int = 0) -> dict:
    """A version's state and its check's lines after `after` (the web page and the CLI poll
    this)."""
    check = getattr(version, "checkrun", None)
    lines = list(check.lines.filter(seq__gt=after).order_by("seq")[:500]) if check else []
    return {"version": version.pk, "league_name": version.league_name,
            "number": version.number, "bot": version.bot.name,
            "check_state": version.check_state, "season_state": version.season_state,
            "summary": check.summary if check else "", "error": version.error,
            "lines": [{"seq": line.seq, "text": shown_line(line.text)} for line in lines],
            "url": f"/versions/{version.pk}/"}


@csrf_exempt   # a token in a header, never a cookie: no cross-site request can carry it
@require_POST
def submit(request: HttpRequest) -> HttpResponse:
    """POST /api/submit?bot=NAME&filename=F with the archive as the raw body."""
    user = token_user(request)   # tokens only: a session cookie never uploads here
    if user is None:
        return refusal(request, "no valid token: make one on your Tokens page and pass "
                                "--token or REFEREE_TOKEN", 401)
    limits = server_limits()
    try:
        services.check_upload(user, content_length(request), limits)
    except services.Refused as why:
        return refusal(request, why.line, why.status)
    filename = os.path.basename(request.GET.get("filename", "upload"))[:200] or "upload"
    handle, name = tempfile.mkstemp(prefix="submit-", dir=settings.FILE_UPLOAD_TEMP_DIR)
    path = Path(name)
    try:
        received = 0
        with os.fdopen(handle, "wb") as out:
            while chunk := request.read(CHUNK):
                received += len(chunk)
                if received > limits.upload_max_bytes:
                    return refusal(request, f"the upload is more than the limit of "
                                            f"{limits.upload_max_bytes} bytes", 413)
                out.write(chunk)
        version = services.upload_version(user, path, filename,
                                          request.GET.get("bot", "").strip(), limits)
    except UploadRefused as exc:
        return refusal(request, str(exc), 400)
    except OSError as exc:
        return refusal(request, f"the server could not store the upload "
                                f"({exc.strerror or exc}); nothing was kept", 507)
    finally:
        path.unlink(missing_ok=True)
    return JsonResponse(version_json(version), status=201)


@require_GET
def version_status(request: HttpRequest, version_id: int) -> HttpResponse:
    """GET /api/versions/<id>?after=SEQ: the version's state and its new check lines."""
    user = api_user(request)
    if user is None:
        return refusal(request, "sign in or pass a token", 401)
    try:
        after = whole_number(request.GET.get("after") or "0", "after")
    except NumberError:
        return refusal(request, "after must be a whole number", 400)
    return JsonResponse(version_json(own_version(user, version_id), after))
