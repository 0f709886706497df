"""The web client's built files in the Python package (services/webclient/static) are those its sources build:
the sources of clients/web and of the library (clients/typescript/src) compiled by the TypeScript the package
pins, into a folder of the test's, compared file by file. Fails when someone changed a source and did not run
`npm run build` in clients/web (the developers' step; the user installs the built files with the package)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from services.webclient import STATIC
from tests.npm import npm_install

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "clients" / "web"


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.name != "__init__.py"}


def test_the_built_web_client_is_up_to_date(tmp_path):
    pinned = json.loads((WEB / "package.json").read_text())["devDependencies"]["typescript"]
    tsc = npm_install(tmp_path / "npm", f"typescript@{pinned}") / "typescript" / "bin" / "tsc"
    done = subprocess.run(["node", str(WEB / "build.mjs"), str(tmp_path / "static")], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "TSC": str(tsc)})
    assert done.returncode == 0, done.stdout + done.stderr
    built, shipped = files(tmp_path / "static"), files(STATIC)
    stale = sorted(name for name in built.keys() | shipped.keys() if built.get(name) != shipped.get(name))
    assert not stale, f"run `npm ci && npm run build` in clients/web and commit: {stale[:20]}"


def test_the_package_ships_the_built_files():
    assert (STATIC / "index.html").is_file() and (STATIC / "js" / "web" / "src" / "main.js").is_file()
