"""A sample of the fuzzed commands (tests/fuzz/strategies.py) sent through a real `souk serve`, at random points of
random games: never a 5xx; every refusal is a JSON ``{"code", "message"}`` 4xx (400 malformed, 401 token, 409
stale, 422 the rules); a 200 is an accepted command that was in the seat's ``/legal`` list just before."""

from __future__ import annotations

import collections
import itertools
import json
import time

import httpx
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from domain.kernel import games
from tests.fuzz import budget
from tests.fuzz.strategies import command_body, json_values

GAMES = games()
SPECS = [(name, seats) for name, game in GAMES.items() for seats in (game.min_seats, game.max_seats)]
REFUSALS = {400, 401, 404, 409, 413, 422}


def check_error(r: httpx.Response) -> str:
    """The answer is a JSON ``{"code", "message"}`` of non-empty strings and nothing else; returns the code."""
    assert r.status_code < 500, f"{r.status_code} {r.text[:500]}"
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert set(body) == {"code", "message"}, body
    assert isinstance(body["code"], str) and body["code"] and isinstance(body["message"], str) and body["message"]
    return body["code"]


def test_fuzzed_commands_through_the_gateway_get_json_4xx_never_5xx(souk_url):
    client = httpx.Client(base_url=souk_url, timeout=30)
    statuses: collections.Counter[tuple[int, str]] = collections.Counter()
    ids = itertools.count()
    figures = collections.Counter()

    class GatewayFuzz(RuleBasedStateMachine):
        @initialize(spec=st.sampled_from(SPECS), seed=st.binary(min_size=32, max_size=32))
        def start(self, spec, seed) -> None:
            name, seats = spec
            r = client.post("/games", json={"game": name, "title": "fuzz", "seats": seats, "seed": seed.hex(),
                                            "unfair": True})
            assert r.status_code == 201, r.text
            self.game_id = r.json()["game_id"]
            self.tokens = []
            for seat in range(seats):
                r = client.post(f"/games/{self.game_id}/seats", json={"name": f"p{seat}"})
                assert r.status_code == 201, r.text
                self.tokens.append(r.json()["token"])
            self.status = "playing"
            figures["games"] += 1

        def auth(self, seat: int) -> dict[str, str]:
            return {"Authorization": f"Bearer {self.tokens[seat]}"}

        def view(self) -> dict:
            r = client.get(f"/games/{self.game_id}/view")
            assert r.status_code == 200, r.text
            view = r.json()
            self.status = view["status"]
            return view

        @precondition(lambda self: self.status == "playing")
        @rule(steps=st.integers(1, 12), pick=st.randoms(use_true_random=False))
        def play_legal(self, steps, pick) -> None:
            for _ in range(steps):
                view = self.view()
                if view["status"] != "playing":
                    return
                seat = pick.choice(view["flow"]["awaiting"])
                legal = client.get(f"/games/{self.game_id}/seats/{seat}/legal", headers=self.auth(seat)).json()
                r = client.post(f"/games/{self.game_id}/seats/{seat}/commands", headers=self.auth(seat),
                                json={"command_id": f"legal-{next(ids)}", "command": pick.choice(legal["legal"])})
                assert r.status_code == 200 and r.json()["status"] == "accepted", r.text
                figures["legal"] += 1

        @rule(data=st.data())
        def fuzz(self, data) -> None:
            """1 to 6 fuzzed requests, one after the other."""
            for _ in range(data.draw(st.integers(1, 6), label="requests")):
                self.fuzz_one(data)

        def fuzz_one(self, data) -> None:
            game = GAMES[self.view()["game"]]
            seats = len(self.tokens)
            seat = data.draw(st.one_of(st.integers(0, seats - 1), st.sampled_from([seats, 2**63 - 1, 2**63, -1])),
                             label="seat")
            token = data.draw(st.sampled_from(["own", "own", "own", "other", "none", "garbage"]), label="token")
            headers = {}
            if token != "none" and 0 <= seat < seats:
                headers["Authorization"] = "Bearer " + {"own": self.tokens[seat], "other": self.tokens[seat - 1],
                                                         "garbage": "x" * 32}.get(token, "")
            legal = []
            if token == "own" and 0 <= seat < seats:
                legal = client.get(f"/games/{self.game_id}/seats/{seat}/legal", headers=headers).json()["legal"]
            body = data.draw(command_body(game, [_command(game, c) for c in legal]), label="command")
            wrapper = data.draw(st.sampled_from(["plain", "plain", "plain", "id", "extra", "version", "bare"]),
                                label="wrapper")
            command_id = f"fz-{next(ids)}"
            if wrapper == "plain":
                raw = b'{"command_id": "%s", "command": %s}' % (command_id.encode(), body)
            elif wrapper == "id":
                odd_id = data.draw(st.one_of(st.sampled_from(["", "x" * 101, "x" * 100]), json_values()), label="id")
                raw = b'{"command_id": %s, "command": %s}' % (json.dumps(odd_id).encode(), body)
            elif wrapper == "extra":
                raw = b'{"command_id": "%s", "command": %s, "seat": 0}' % (command_id.encode(), body)
            elif wrapper == "version":
                version = data.draw(st.one_of(json_values(), st.integers()), label="expected_version")
                raw = b'{"command_id": "%s", "command": %s, "expected_version": %s}' % (
                    command_id.encode(), body, json.dumps(version).encode())
            else:
                raw = body
            r = client.post(f"/games/{self.game_id}/seats/{seat}/commands", content=raw,
                            headers={**headers, "content-type": "application/json"})
            figures["fuzzed"] += 1
            if r.status_code == 200:
                reply = r.json()
                assert reply["status"] == "accepted", reply
                sent = _command(game, json.loads(raw)["command"])
                assert sent in [_command(game, c) for c in legal], f"accepted a command not in /legal: {raw!r}"
                statuses[(200, "accepted")] += 1
            else:
                assert r.status_code in REFUSALS, (r.status_code, r.text, raw[:300])
                statuses[(r.status_code, check_error(r))] += 1

    started = time.monotonic()
    try:
        run_state_machine_as_test(GatewayFuzz, settings=budget.state_machine(5, steps=25))
    finally:
        client.close()
    server_errors = sum(n for (status, _), n in statuses.items() if status >= 500)
    print(f"\ngateway command fuzz: {figures['games']} games, {figures['legal']} legal commands, "
          f"{figures['fuzzed']} fuzzed requests, {server_errors} 5xx, {time.monotonic() - started:.1f} s; "
          f"answers: {dict(sorted(statuses.items()))}")
    assert figures["fuzzed"] and not server_errors


def _command(game, legal_json: dict):
    """A legal command as the game's Struct (the strategies mutate what the domain lists)."""
    from services.store.codec import command_decoder

    return command_decoder(game.name).decode(json.dumps(legal_json).encode())
