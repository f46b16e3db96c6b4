#!/usr/bin/env bash
# Set up rootful podman for running bots in containers, and check that it works.
#
# Idempotent; for Debian 12 as root, without a TTY or stdin (CI). Installs podman with
# the runc runtime (crun refuses this machine's hybrid cgroup v1 layout), catatonit
# (for `podman run --init`) and mmdebstrap (used by sample_bots/container/build-image.sh
# to make a Debian base image without any container registry), then writes
# /etc/containers/containers.conf:
#   * runtime = "runc", cgroup_manager = "cgroupfs", events_logger = "file": there is
#     no systemd or journald here;
#   * default_ulimits no higher than the current hard limits: podman's defaults
#     (nofile=1048576) need CAP_SYS_RESOURCE, which this machine does not grant, and
#     runc fails with "error setting rlimit type 7: operation not permitted";
#   * init_path: Debian ships catatonit in /usr/bin, not /usr/libexec/podman.
# Finally it imports a tiny image (dash and its libraries from the host) and runs it.
#
# Usage: bash .ci/setup-containers.sh        (exit status 0 = podman run works)
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
log() { printf '[setup-containers] %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
    log "must run as root"
    exit 1
fi

packages=(podman runc conmon catatonit mmdebstrap)
missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing: ${missing[*]}"
    apt-get update -q </dev/null >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi

# Never ask for more than the hard limits in force (no CAP_SYS_RESOURCE to raise them).
hard_nofile=$(ulimit -Hn)
hard_nproc=$(ulimit -Hu)
clamp() { if [ "$1" = unlimited ] || [ "$1" -gt "$2" ]; then echo "$2"; else echo "$1"; fi; }
nofile=$(clamp "$hard_nofile" 20000)
nproc=$(clamp "$hard_nproc" 4096)

conf=/etc/containers/containers.conf
want=$(cat <<EOF
# Written by .ci/setup-containers.sh (referee). Rootful podman on Debian 12.
[containers]
default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]
init_path = "/usr/bin/catatonit"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
)
mkdir -p /etc/containers
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
    if [ -f "$conf" ] && ! grep -q 'setup-containers.sh' "$conf"; then
        cp "$conf" "$conf.orig.$(date +%s)"
    fi
    printf '%s\n' "$want" >"$conf"
    log "wrote $conf"
fi

# Smoke test: a throw-away image made of dash and the libraries it needs.
image=localhost/referee-smoke:latest
if ! podman image exists "$image"; then
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    for d in bin sbin lib lib64; do
        if [ -L "/$d" ]; then
            target=$(readlink "/$d")
            ln -s "$target" "$root/$d"
            case "$target" in /*) mkdir -p "$root$target" ;; *) mkdir -p "$root/$target" ;; esac
        fi
    done
    for f in /usr/bin/dash $(ldd /usr/bin/dash | grep -o '/[^ ]*'); do
        real=$(readlink -f "$f")
        mkdir -p "$root$(dirname "$real")"
        cp "$real" "$root$real"
        if [ "$f" != "$real" ]; then
            mkdir -p "$(dirname "$root$f")"
            [ -e "$root$f" ] || ln -s "$real" "$root$f"
        fi
    done
    ln -s dash "$root/usr/bin/sh"
    tar -C "$root" -c . | podman import --quiet --change 'CMD ["/bin/sh"]' - "$image" >/dev/null
fi
out=$(podman run --rm --network=none --init "$image" sh -c 'echo podman-ok' </dev/null)
if [ "$out" != podman-ok ]; then
    log "podman run did not work: $out"
    exit 1
fi
log "podman $(podman version --format '{{.Client.Version}}') works (runtime runc)"
