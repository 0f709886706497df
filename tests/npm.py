"""Node packages from the npm registry for the tests that run the ecosystem's own tools (TypeScript's compiler, the
official AsyncAPI parser): installed into a folder of the test session's; the test is skipped where node and npm
are not installed or the registry cannot be reached."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def npm_install(where: Path, spec: str, timeout: float = 180) -> Path:
    """Installs ``spec`` (``typescript@5``) into ``where``; returns its ``node_modules``."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("node and npm are not installed")
    done = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(where), spec],
                          capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        pytest.skip(f"npm could not install {spec}: {done.stderr[-500:]}")
    return where / "node_modules"
