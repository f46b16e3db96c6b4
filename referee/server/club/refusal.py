"""The club's one-line refusal: what was wrong with a request, in one line, as JSON for the
API and plain text otherwise (views, and the sign-in middleware below them)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse


def refusal(request: HttpRequest, text: str, status: int = 400) -> HttpResponse:
    """One line saying what was wrong: JSON for the API, plain text otherwise."""
    if request.path.startswith("/api/"):
        return JsonResponse({"error": text}, status=status)
    return HttpResponse(text + "\n", status=status, content_type="text/plain; charset=utf-8")
