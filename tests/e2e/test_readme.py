"""The README's curl walkthrough, run as it is written against a live `souk serve`."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def walkthrough() -> str:
    text = README.read_text()
    block = re.search(r"<!-- walkthrough -->\s*```bash\n(.*?)```\s*<!-- /walkthrough -->", text, re.S)
    assert block, "the README lost its walkthrough markers"
    return block.group(1)


def test_the_readme_walkthrough_plays_a_whole_game_with_curl(souk_url):
    script = "set -euo pipefail\n" + walkthrough()
    done = subprocess.run(["bash", "-c", script], env={**os.environ, "S": souk_url}, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert '"status":"accepted"' in out  # step 4
    assert '"code":"' in out  # step 5: the resend with a new id is refused with a code
    lines = out.strip().splitlines()
    result, audit = lines[-2], lines[-1]
    assert "'scores'" in result and "'winners'" in result
    seed, seed_hash, events = audit.split()
    assert len(seed) == 64 and len(seed_hash) == 64 and int(events) > 100
