"""A network of its own for a build that may use the network (`build_network = true`).

The build runs in a network namespace of its own, which reaches the outside only through
user-mode networking (slirp4netns, as rootless containers use): slirp4netns turns the build's
packets into ordinary sockets of the referee's host, so without a filter the build could reach
whatever the host reaches, its own services included. So, before the build starts, a packet
filter is loaded into the namespace (as root; the build itself has no capability to change it):

* IPv4 out of the namespace goes only to public addresses: never to the host's loopback
  (slirp4netns runs with `--disable-host-loopback`, and 127.0.0.0/8 is the namespace's own),
  nor the host's own addresses and the networks they are on, nor private, shared, link-local,
  multicast or reserved ranges (`BLOCKED`);
* the one exception is DNS (port 53, UDP and TCP) to slirp4netns's resolver 10.0.2.3, which
  forwards to the host's own resolver, so that names resolve as they do on the host;
* no IPv6 at all (slirp4netns is started without it, and the filter drops it).

Everything is set up before the build runs and torn down after it. If any step fails, the
build does not run: `NetworkUnavailable` says which step, and the caller fails the build. It
needs root (the referee's normal case on a tournament host, and where the sandbox drops to a
uid of its own) and the programs `unshare`, `nsenter` (util-linux), `slirp4netns`,
`iptables-restore`/`ip6tables-restore` (iptables) and `ip` (iproute2).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from referee.errors import UserError
from referee.util.trusted import SYSTEM_PATH, system_program

__all__ = ["BLOCKED", "DNS", "Network", "NetworkUnavailable", "isolated_network"]

TAP = "tap0"
DNS = "10.0.2.3"        # slirp4netns's built-in resolver (it forwards to the host's)
SETUP_SECONDS = 30.0

# Destinations a network build must never reach (besides the host's own networks, found when
# the namespace is made). IPv6 is dropped altogether.
BLOCKED = (
    "0.0.0.0/8",          # "this network"
    "10.0.0.0/8",         # private (and slirp4netns's own 10.0.2.0/24: gateway = host loopback)
    "100.64.0.0/10",      # shared address space (carrier NAT)
    "127.0.0.0/8",        # loopback
    "169.254.0.0/16",     # link-local (cloud metadata services)
    "172.16.0.0/12",      # private
    "192.0.0.0/24",       # IETF protocol assignments
    "192.168.0.0/16",     # private
    "198.18.0.0/15",      # benchmarking
    "224.0.0.0/4",        # multicast
    "240.0.0.0/4",        # reserved, broadcast
)

TOOLS = ("unshare", "nsenter", "slirp4netns", "iptables-restore", "ip6tables-restore", "ip")

# The namespace's holder: it prints its network namespace, then lives until its stdin closes
# (when the build is over, or when the referee dies).
_HOLDER = "readlink /proc/self/ns/net && exec cat >/dev/null"


class NetworkUnavailable(UserError):
    """The isolated network for a build cannot be set up here (the reason is the message)."""


@dataclass(frozen=True)
class Network:
    """A network namespace ready for a build: join it with `nsenter --net=PATH`."""

    path: str                 # /proc/PID/ns/net of the namespace's holder
    resolv_conf: Path         # `nameserver 10.0.2.3`, to show the build as /etc/resolv.conf
    blocked: tuple[str, ...]  # every IPv4 network the filter refuses


def host_addresses() -> list[ipaddress.IPv4Interface]:
    """The host's own IPv4 addresses, each with the prefix of the network it is on."""
    done = subprocess.run([system_program("ip"), "-json", "-4", "address", "show"],
                          capture_output=True, text=True, timeout=SETUP_SECONDS)
    if done.returncode != 0:
        raise NetworkUnavailable(f"cannot list the host's addresses: {_last_line(done.stderr)}")
    return [ipaddress.IPv4Interface(f"{info['local']}/{info.get('prefixlen', 32)}")
            for link in json.loads(done.stdout or "[]")
            for info in link.get("addr_info", []) if "local" in info]


def filter_rules(blocked: tuple[str, ...]) -> tuple[str, str]:
    """The namespace's filter as (iptables-restore input, ip6tables-restore input)."""
    v4 = ["*filter", ":INPUT ACCEPT [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT DROP [0:0]",
          "-A OUTPUT -o lo -j ACCEPT",
          f"-A OUTPUT -o {TAP} -d {DNS}/32 -p udp --dport 53 -j ACCEPT",
          f"-A OUTPUT -o {TAP} -d {DNS}/32 -p tcp --dport 53 -j ACCEPT"]
    for net in blocked:   # refused at once (a reset), not left to time out
        v4 += [f"-A OUTPUT -d {net} -p tcp -j REJECT --reject-with tcp-reset",
               f"-A OUTPUT -d {net} -j REJECT --reject-with icmp-net-unreachable"]
    v4 += [f"-A OUTPUT -o {TAP} -j ACCEPT", "COMMIT", ""]
    v6 = ["*filter", ":INPUT DROP [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT DROP [0:0]",
          "-A INPUT -i lo -j ACCEPT", "-A OUTPUT -o lo -j ACCEPT", "COMMIT", ""]
    return "\n".join(v4), "\n".join(v6)


def _check_tools() -> None:
    if os.geteuid() != 0:
        raise NetworkUnavailable("the isolated network needs the referee to run as root")
    missing = [tool for tool in TOOLS if shutil.which(tool, path=SYSTEM_PATH) is None]
    if missing:
        raise NetworkUnavailable(f"{', '.join(missing)} not installed (Debian: apt-get "
                                 f"install slirp4netns iptables iproute2 util-linux)")


def _load_filter(path: str, blocked: tuple[str, ...]) -> None:
    v4, v6 = filter_rules(blocked)
    for tool, rules in (("iptables-restore", v4), ("ip6tables-restore", v6)):
        done = subprocess.run([system_program("nsenter"), f"--net={path}", "--",
                               system_program(tool)], input=rules, capture_output=True,
                              text=True, timeout=SETUP_SECONDS)
        if done.returncode != 0:
            raise NetworkUnavailable(f"{tool} failed: {_last_line(done.stderr)}")


def _complaints(text: str) -> str:
    """What a failed tool said, its warnings left out (slirp4netns warns of its seccomp
    support after the error that matters): its lines joined by "; ", at most 300 characters."""
    lines = [line.strip() for line in text.strip().splitlines()
             if line.strip() and not line.strip().startswith("WARNING")]
    said = "; ".join(lines) or _last_line(text)
    return said if len(said) <= 300 else said[:300] + "..."


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


@contextlib.contextmanager
def isolated_network(work: Path) -> Iterator[Network]:
    """A fresh network namespace whose only way out is slirp4netns, filtered as the module
    says, for as long as the context lasts; `work` (a folder of the build's) receives its
    resolv.conf. Raises NetworkUnavailable, having undone what it began, if a step fails."""
    _check_tools()
    own = dict.fromkeys(str(address.network) for address in host_addresses())
    blocked = (*BLOCKED, *(net for net in own if net not in BLOCKED))
    with contextlib.ExitStack() as stack:
        holder = subprocess.Popen([system_program("unshare"), "--net", "--",
                                   system_program("sh"), "-c", _HOLDER],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        stack.callback(_end, holder)
        assert holder.stdout is not None
        seen = holder.stdout.readline().strip()
        path = f"/proc/{holder.pid}/ns/net"
        with contextlib.suppress(OSError):
            if seen and seen != os.readlink("/proc/self/ns/net") and os.readlink(path) == seen:
                seen = "ok"
        if seen != "ok":   # never go on in the host's own namespace
            raise NetworkUnavailable(f"unshare --net failed: {_last_line(_rest(holder))}")
        _load_filter(path, blocked)
        ready_r, ready_w = os.pipe()
        exit_r, exit_w = os.pipe()
        log = stack.enter_context(tempfile.TemporaryFile("w+"))
        try:
            slirp = subprocess.Popen(
                [system_program("slirp4netns"), "--configure", "--mtu=65520",
                 "--disable-host-loopback",
                 "--enable-sandbox", "--enable-seccomp", f"--ready-fd={ready_w}",
                 f"--exit-fd={exit_r}", str(holder.pid), TAP],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(ready_w, exit_r))
        finally:
            os.close(ready_w)
            os.close(exit_r)
        stack.callback(_end, slirp, exit_w)
        with os.fdopen(ready_r, "rb") as ready:
            answer = ready.read(1)        # "1" once the tap device is up; EOF if it failed
        if answer != b"1":
            slirp.wait(SETUP_SECONDS)
            log.seek(0)
            raise NetworkUnavailable(f"slirp4netns failed: {_complaints(log.read())}")
        resolv = work / "resolv.conf"
        resolv.write_text(f"nameserver {DNS}\n")
        resolv.chmod(0o644)
        yield Network(path, resolv, blocked)


def _rest(process: subprocess.Popen[str]) -> str:
    with contextlib.suppress(Exception):
        return process.communicate(timeout=SETUP_SECONDS)[1] or ""
    return ""


def _end(process: subprocess.Popen, close_fd: int | None = None) -> None:
    """Let `process` go (its stdin or `close_fd` closed) and reap it; kill it if it lingers."""
    if close_fd is not None:
        os.close(close_fd)
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    try:
        process.wait(SETUP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
