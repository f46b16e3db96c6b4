"""Container bots in tests: the runtime this machine has (podman, set up by
.ci/setup-containers.sh) and the test bots as images built without a registry."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import grpc
import pytest
from google import protobuf

from referee.bots.container import detect_runtime, image_id

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "bots"
BUILD_SCRIPT = ROOT / "sample_bots" / "container" / "build-image.sh"
CONTAINERFILE = ROOT / "sample_bots" / "container" / "Containerfile"
TEST_REPO = "localhost/referee-test-honest"


def _runtime() -> tuple[str | None, str]:
    try:
        return detect_runtime("podman"), ""
    except RuntimeError as exc:
        return None, str(exc)


RUNTIME, WHY_NOT = _runtime()


def _containers_required() -> bool:
    if os.environ.get("REFEREE_REQUIRE_CONTAINERS") == "1":
        return True
    conf = Path("/etc/containers/containers.conf")
    try:
        return "setup-containers.sh" in conf.read_text()
    except OSError:
        return False


def bot_image(runtime: str, context: Path, bot: str, repo: str) -> str:
    """Test bot `bot` (its main.py beside botlib.py) as an image tagged by a hash of what goes
    into it, built once per change of those inputs; older tags of `repo` are removed."""
    sources = [BOTS / bot / "main.py", BOTS / "botlib.py"]
    protocol = sorted(p for p in (ROOT / "referee" / "protocol").rglob("*.py")
                      if "__pycache__" not in p.parts)
    digest = hashlib.sha256(f"grpcio {grpc.__version__} protobuf {protobuf.__version__}".encode())
    for path in (*sources, BUILD_SCRIPT, CONTAINERFILE, ROOT / "referee" / "__init__.py",
                 *protocol):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    name = f"{repo}:{digest.hexdigest()[:12]}"
    if image_id(runtime, name) is None:
        for path in sources:
            (context / path.name).write_bytes(path.read_bytes())
        done = subprocess.run(["bash", str(BUILD_SCRIPT), str(context), name],
                              env={**os.environ, "WITH_REFEREE_SDK": "1"}, cwd=ROOT,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=900, check=False)
        assert done.returncode == 0, f"image build failed:\n{done.stdout}\n{done.stderr}"
        stale = subprocess.run([runtime, "images", "--format", "{{.Repository}}:{{.Tag}}",
                                repo], capture_output=True, text=True, check=False)
        for other in stale.stdout.split():
            if other != name:
                subprocess.run([runtime, "rmi", other], capture_output=True, check=False)
    assert image_id(runtime, name) is not None
    return name


def need_runtime() -> str:
    """The container runtime, or the test skips (fails where the machine is set up for
    containers: a broken runtime must not pass as "skipped")."""
    if RUNTIME is None:
        if _containers_required():
            pytest.fail(f"this machine is set up for containers, but {WHY_NOT}")
        pytest.skip(f"container tests need podman: {WHY_NOT} "
                    "(run `bash .ci/setup-containers.sh` as root)")
    return RUNTIME

