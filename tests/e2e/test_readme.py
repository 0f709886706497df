"""The README's curl walkthrough, run as it is written against a live `souk serve`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def walkthrough(name: str = "walkthrough") -> str:
    text = README.read_text()
    block = re.search(rf"<!-- {name} -->\s*```bash\n(.*?)```\s*<!-- /{name} -->", text, re.S)
    assert block, f"the README lost its {name} markers"
    return block.group(1)


def test_the_readme_walkthrough_plays_a_whole_game_with_curl_then_reads_its_past(souk_url):
    travel = walkthrough("time-travel")  # run after the walkthrough: its game, over
    fork = walkthrough("fork")
    script = ("set -euo pipefail\n" + walkthrough() + "echo '--- time travel'\n" + travel + "echo '--- fork'\n"
              + fork)
    # `python3` is this interpreter, as in a venv the README's install made: not a version manager's shim (pyenv's,
    # a bash script, took two thirds of the walkthrough's 130 s for its ~530 JSON one-liners)
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    done = subprocess.run(["bash", "-c", script], env={**os.environ, "S": souk_url, "PATH": path},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out, rest = done.stdout.split("--- time travel\n")
    past, forked = rest.split("--- fork\n")
    assert forked.strip().endswith("'version': 40} 2"), forked  # forked_from, and the two seats taken
    view, legal, spectator, seat_2, refused = past.strip().splitlines()
    assert view.startswith("10 {'phase': ") and int(legal) > 0, past  # seat 0 at version 10, with its token
    assert (spectator, seat_2) == ("None 10", "2 10"), past  # the game is over: seat 2's past without one
    assert '"code":"bad_version"' in refused, past
    assert '"status":"accepted"' in out  # step 4
    assert '"code":"' in out  # step 5: the resend with a new id is refused with a code
    lines = out.strip().splitlines()
    result, audit = lines[-2], lines[-1]
    assert "'scores'" in result and "'winners'" in result
    seed, seed_hash, events = audit.split()
    assert len(seed) == 64 and len(seed_hash) == 64 and int(events) > 100
