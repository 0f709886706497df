"""Schemathesis over the gateway's OpenAPI document (GET /schema/openapi.json of a real `souk serve`).

Its CLI runs every phase: the documented examples, the coverage phase (boundary and invalid values of every
parameter and body field), random fuzzing (valid and invalid inputs) and the stateful phase, which chains
operations through the links it infers from the document (POST /games → GET /games/{game_id} → POST …/seats →
the seat's view, legal commands, commands, history). Games prepared beforehand (one waiting for players, two in
play, one of them Istanbul solo, one over) give the links and the generated requests real game ids, seats and tokens
(tests/fuzz/schemathesis_hooks.py).

Checks: every one Schemathesis has (no 5xx, status codes, content types and bodies as documented, a request
the document forbids is refused, authentication enforced, ...) but ``positive_data_acceptance`` (a request the
document allows may still be refused by the rules: 422), plus ``error_is_code_and_message``.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.fuzz import budget

ROOT = Path(__file__).resolve().parents[2]


def prepare(url: str) -> dict[str, list[str]]:
    """Four games and their seat tokens: one waiting for players, two in play (Istanbul solo), one over."""
    tokens: dict[str, list[str]] = {}
    with httpx.Client(base_url=url, timeout=30) as client:
        for game, seats, joined, moves in (("samarkand", 3, 1, 0), ("yspahan", 2, 2, 6), ("yspahan", 2, 2, None),
                                             ("istanbul", 1, 1, 6)):
            r = client.post("/games", json={"game": game, "title": f"schemathesis {game}", "seats": seats})
            assert r.status_code == 201, r.text
            game_id = r.json()["game_id"]
            tokens[game_id] = [client.post(f"/games/{game_id}/seats", json={"name": f"p{s}"}).json()["token"]
                               for s in range(joined)]
            rng = random.Random(seats)
            for n in range(5000 if moves is None else moves):
                view = client.get(f"/games/{game_id}/view").json()
                if view["status"] != "playing":
                    break
                seat = rng.choice(view["flow"]["awaiting"])
                auth = {"Authorization": f"Bearer {tokens[game_id][seat]}"}
                legal = client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth).json()["legal"]
                r = client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth,
                                json={"command_id": f"c{n}", "command": rng.choice(legal)})
                assert r.status_code == 200, r.text
    return tokens


def test_schemathesis_finds_no_5xx_and_the_gateway_answers_as_documented(souk_url, tmp_path):
    started = time.monotonic()
    (tmp_path / "tokens.json").write_text(json.dumps(prepare(souk_url)))
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.fuzz.schemathesis_hooks",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "SOUK_FUZZ_TOKENS": str(tmp_path / "tokens.json"), "SOUK_FUZZ_STATS": str(tmp_path / "stats.json")}
    seed = [] if budget.SCALE else ["--seed", "8"]
    command = [str(Path(sys.executable).parent / "schemathesis"), "run", f"{souk_url}/schema/openapi.json",
               "--checks", "all", "--exclude-checks", "positive_data_acceptance",
               "--max-examples", str(budget.examples(25)), "--workers", "1", "--continue-on-failure",
               "--max-failures", "50", "--request-timeout", "15", "--no-color", "--warnings", "off", *seed]
    run = subprocess.run(command, check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    output = run.stdout + run.stderr
    stats = json.loads((tmp_path / "stats.json").read_text()) if (tmp_path / "stats.json").exists() else {}
    cases = re.search(r"(\d+) generated", output)
    server_errors = sum(n for status, n in stats.items() if status.isdigit() and int(status) >= 500)
    statuses = {s: n for s, n in sorted(stats.items()) if s.isdigit()}
    print(f"\nschemathesis: {cases.group(1) if cases else '?'} test cases, {stats.get('requests', 0)} requests, "
          f"{server_errors} 5xx, {time.monotonic() - started:.1f} s; statuses: {statuses}")
    assert run.returncode == 0, output[-15000:]
    assert stats.get("requests") and not server_errors
