#!/usr/bin/env bash
# Run a docs' `referee serve ...` line for real: on a free loopback port, until its login page
# answers, then stop it with SIGTERM; its output, and its exit status (0 when it stopped well).
set -uo pipefail
port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
referee serve "$@" --port "$port" >"$log" 2>&1 &
pid=$!
python - "$port" "$pid" <<'PY'
import sys, time, urllib.request, os
port, pid = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 300
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=10) as answer:
            if answer.status == 200:
                sys.exit(0)
    except OSError:
        time.sleep(0.3)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit(1)
sys.exit(1)
PY
ready=$?
kill -TERM "$pid" 2>/dev/null
wait "$pid"
status=$?
cat "$log"
rm -f "$log"
[ "$ready" = 0 ] || { echo "serve_briefly: the server never answered" >&2; exit 1; }
exit "$status"
