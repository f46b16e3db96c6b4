"""Run a docs' `referee serve ...` line for real: the `referee` command on PATH (a reader's) on
a free loopback port until its sign-in page answers and its runner has opened the season's
store (the web server answers first: it runs at a greater CPU weight), then SIGTERM. Prints
the server's output and exits with its status (0 when it stopped well); 1 when it never
answered.

    python tests/serve_briefly.py [referee serve's options but --port]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_support import free_port  # noqa: E402
from wait_support import wait_for  # noqa: E402

from referee.server.shared.clubfolder import ClubFolder  # noqa: E402


def answers(url: str) -> bool:
    """True when `url` answers 200."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status == 200
    except OSError:
        return False


def main(options: list[str]) -> int:
    """Start `referee serve OPTIONS --port P`, wait until it answers, stop it; its status."""
    port = free_port()
    data = Path(options[options.index("--data") + 1] if "--data" in options else "club-data")
    store = ClubFolder(data).season_league.store_path
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen(["referee", "serve", *options, "--port", str(port)],
                                  stdout=log, stderr=subprocess.STDOUT)

        def ready() -> bool:
            assert server.poll() is None, "the server stopped"
            return store.exists() and answers(f"http://127.0.0.1:{port}/login/")

        try:
            wait_for("the server to answer", ready, timeout=300)
            answered = True
        except AssertionError:
            answered = False
        finally:
            server.terminate()
            status = server.wait()
        log.seek(0)
        print(log.read(), end="")
    if not answered:
        print("serve_briefly: the server never answered", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
