"""How the club server runs uploads: in the sandbox where it works; without it only where the
season file says `unconfined_uploads = true`; otherwise not at all (it fails closed).

`referee serve` says which in one line at its start, the organiser's pages say it (a banner
on every page while uploads run unconfined), and the runner acts on it: refused, it stores
uploads and holds their checks (one line for the student:
`referee.bots.confinement.NO_SANDBOX`) and starts none of
their code. The house bots, the organiser's own programs, are checked and may run either way
(as `referee league` runs them on the organiser's machine); season games wait while uploads
cannot run, since they would seat uploads beside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CONFINED, UNCONFINED, REFUSED = "confined", "unconfined", "refused"
KEY = "unconfined_uploads"   # the season file's key that lets uploads run unconfined


@dataclass(frozen=True)
class Confinement:
    """How uploads run here (`state`) and the one line that says so ("" when confined)."""

    state: str
    line: str

    @property
    def uploads_run(self) -> bool:
        """Whether uploads' builds and bots may start at all."""
        return self.state != REFUSED


def confinement(settings: Any) -> Confinement:
    """How uploads run under `settings` (a RunnerSettings) on this machine: probes bubblewrap
    (`sandbox_available`, cached per process) unless the season file turns the sandbox off."""
    from referee.bots.sandbox import sandbox_available

    off = settings.league.sandbox is False
    if not off and sandbox_available():
        return Confinement(CONFINED, "")
    why = ("the season file turns the sandbox off (sandbox = false)" if off else
           "bubblewrap (bwrap) is not installed or does not work here")
    if settings.unconfined_uploads:
        return Confinement(UNCONFINED, f"warning: uploads run WITHOUT a sandbox, as root if the "
                                       f"server is root ({KEY} = true in the season file; {why})")
    return Confinement(REFUSED, f"error: uploads are stored but not built or run: {why}; "
                                f"install bubblewrap, or set {KEY} = true in the season file "
                                f"to run them unconfined")
