"""Le marché de Samarkand in real time, end to end (issue #19, section 2): a whole game against real Redis through
`souk serve` (its engine, projector, gateway and clock worker), each value of the countdown shown 250 ms.

Players over HTTP: every seat chooses its card as soon as its view asks; in each round one seat stops once, when
its view shows 7 (the stop may reach the engine at 7 or, when the clock worker's tick came first, at 6). Then the
unredacted history (the audit) must show: every value the rules show, 10 down to 1, closed by the clock worker's
tick no earlier than its due instant, each due one interval after the value appeared; every stop settled at the
value it was recorded at, with the others of that value; the round ending at 0; the game over; and its record
verified by re-running every command, the ticks included.
"""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from tests.e2e.support import bearer, started_game

pytestmark = pytest.mark.anyio

INTERVAL_S = 0.25
SEATS = 3


async def play(client: httpx.AsyncClient, game_id: str, tokens: list[str], limit_s: float = 120) -> None:
    stopped: set[int] = set()  # the rounds in which a seat stopped
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for seat, token in enumerate(tokens):
            view = (await client.get(f"/games/{game_id}/seats/{seat}/view", headers=bearer(token))).json()
            if view["status"] == "over":
                return
            legal, game = view["legal"], view["view"]
            if not legal:
                continue
            command = legal[0]
            if command["type"] == "samarkand.Stop":
                if game["round"] in stopped or game["value"] != 7 or seat != game["round"] % SEATS:
                    continue
                stopped.add(game["round"])
            body = {"command_id": f"s{seat}-{view['version']}-{command['type']}", "command": command}
            r = await client.post(f"/games/{game_id}/seats/{seat}/commands", json=body, headers=bearer(token))
            assert r.status_code in (200, 409, 422), r.text  # 422: a stop the tick overtook (e.g. value gone)
        await asyncio.sleep(0.02)
    pytest.fail("the real-time game did not end in time")


async def test_a_real_time_game_is_played_to_the_end_on_the_clock_workers_ticks(souk_url):
    options = {"countdown_mode": "realtime", "countdown_interval_ms": int(INTERVAL_S * 1000)}
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_id, tokens = await started_game(client, "samarkand", SEATS, options=options)
        await play(client, game_id, tokens)
        audit = (await client.get(f"/games/{game_id}/audit")).json()
        record = await client.get(f"/games/{game_id}/record")
        verdict = (await client.post("/verify", content=record.content)).json()

    events = [(e["type"], json.loads(e["payload"]) if isinstance(e["payload"], str) else e["payload"],
               e["command_id"], e["recorded_at"]) for e in audit["events"]]
    assert events[-1][0] == "table.GameEnded"
    assert verdict["ok"], verdict

    timer: dict | None = None  # the running timer (the latest ClocksSet's)
    shown_at = 0.0  # when the value now shown appeared
    values: dict[int, list[int]] = {}  # round -> the values closed in it
    stops: dict[tuple[int, int], set[int]] = {}  # (round, value) -> the seats whose stop was recorded then
    round_ = 0
    for kind, payload, command_id, at in events:
        if kind == "table.ClocksSet":
            new = payload.get("timer")
            if new is not None and (timer is None or new["key"] != timer["key"]):
                # a value shows for the interval from its start (exact: approx's relative tolerance is huge at unix
                # times), the start being the instant of the command that showed it
                assert new["due"] == payload["at"] + INTERVAL_S and payload["at"] == at
                shown_at = at
            timer = new
        elif kind == "samarkand.RoundStarted":
            round_ = payload["round"]
        elif kind == "samarkand.Answered":
            assert payload["stop"] is True  # nobody passes in real time
            stops.setdefault((round_, payload["value"]), set()).add(payload["seat"])
        elif kind == "samarkand.ValueClosed":
            value = payload["value"]
            assert timer is not None and timer["key"] == f"{round_}:{value}"
            values.setdefault(round_, []).append(value)
            if ":tick:" in command_id:  # the clock worker's: not before the due instant
                assert command_id.startswith("clock:") and at >= timer["due"] >= shown_at + INTERVAL_S - 1e-6
            called = {s["seat"] for s in payload["stops"]}
            assert called == stops.get((round_, value), set())  # each stop settled at its value, together
    assert sorted(values) == list(range(1, 11))
    assert all(closed == list(range(10, 0, -1)) for closed in values.values()), values  # 10 down to 1, then 0
    assert len(stops) >= 9  # a stop in (nearly) every round: not all overtaken by ticks
    # one stopper a value never closes it early (three seats are eligible): every value ran out on a tick
    assert sum(":tick:" in c for k, _, c, _ in events if k == "samarkand.ValueClosed") == 100
