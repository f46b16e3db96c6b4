"""The Content-Security-Policy every answer of the club server carries.

Bots' names, notes and output reach pages that the organiser opens while signed in (the
replays, the season report, served from the same origin as the admin). Every such text is
escaped where it is written; the policy is the second wall: should an escape ever be missed,
the browser still runs no script and loads no style but the club's own files, sends no form
anywhere else, and lets no other site frame the pages.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",          # no inline script, no eval: only the club's own files
    "style-src": "'self'",
    "img-src": "'self' data:",       # the report's empty favicon (data:,)
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
# The season report draws its bars and heat map with style attributes computed from numbers
# (no bot-supplied text); its pages may keep those, and nothing else inline.
STYLE_ATTRIBUTES = {"style-src-attr": "'unsafe-inline'"}


def policy_for(response: HttpResponse) -> str:
    """The policy of one answer: frame-ancestors follows the answer's X-Frame-Options (a
    replay viewer that its own game page frames says SAMEORIGIN), and an answer marked
    with `allow_style_attributes` may have style attributes."""
    policy = dict(POLICY)
    if response.get("X-Frame-Options", "").upper() == "SAMEORIGIN":
        policy["frame-ancestors"] = "'self'"
    if getattr(response, "allow_style_attributes", False):
        policy.update(STYLE_ATTRIBUTES)
    return "; ".join(f"{name} {value}" for name, value in policy.items())


def allow_style_attributes(response: HttpResponse) -> HttpResponse:
    """Mark an answer whose page may use style attributes (the season report's)."""
    response.allow_style_attributes = True
    return response


class ContentSecurityPolicyMiddleware(MiddlewareMixin):
    """Set the policy on every answer that has none (pages, files, errors, the admin). First
    in MIDDLEWARE: it sees the answers of every other one, WhiteNoise's files included."""

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy_for(response)
        return response
