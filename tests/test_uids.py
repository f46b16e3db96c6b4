"""The uid pool: each sandboxed instance gets a uid nobody else holds, across processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from referee.bots import uids

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="uids are leased only as root")


def test_a_held_uid_is_not_leased_again_even_by_another_process(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(uids, "LOCK_DIR", tmp_path / "uids")
    monkeypatch.setattr(uids, "POOL_SIZE", 2)
    first, second = uids.lease(), uids.lease()
    assert first and second and {first.uid, second.uid} == {uids.POOL_START, uids.POOL_START + 1}
    with pytest.raises(uids.UidPoolError):
        uids.lease(attempts=20)
    first.release()
    assert not (tmp_path / "uids" / str(first.uid)).exists()   # nothing left behind
    # Another process holding the free uid: this one gets none.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, referee.bots.uids as u; from pathlib import Path; "
         "u.LOCK_DIR = Path(sys.argv[1]); u.POOL_SIZE = 2; l = None\n"
         "while l is None or l.uid != int(sys.argv[2]):\n l = u.lease()\n"
         "print('held', flush=True); sys.stdin.read()", str(tmp_path / "uids"), str(first.uid)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(uids.UidPoolError):
            uids.lease(attempts=20)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    again = uids.lease()              # the holder is gone: its lock went with it
    assert again and again.uid == first.uid
    again.release()
    second.release()


def test_stale_lock_files_are_swept(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(uids, "LOCK_DIR", tmp_path / "uids")
    (tmp_path / "uids").mkdir()
    for n in range(5):      # left by referees killed by SIGKILL: nobody holds them
        (tmp_path / "uids" / str(uids.POOL_START + 10 + n)).touch()
    lease = uids.lease()
    assert lease is not None
    assert sorted(os.listdir(tmp_path / "uids")) == [str(lease.uid)]
    lease.release()
