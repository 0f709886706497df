"""Every title played to its end at a table with clocks (issue #19), on a fake clock: seats act a few seconds
apart or let their time run out; whatever ``due(table)`` lists is done at its instant (a timeout, a bot's move for
a seat that timed out, is absent or out), a seat sometimes resigns or comes back. At every command: the clocks are
what the events say (a fold of all the events, and a snapshot, give the same table), nothing due is refused, and
the game ends with a winner that is not out."""

from __future__ import annotations

import random

import msgspec
import pytest

from contracts.table import ClocksSet, GameEnded, PlayFor, Resign, SeatOut, Timeout
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import bot_command, get_game
from tests.domain.harness import token_hash

CASES = [("samarkand", 3, "bot"), ("yspahan", 2, "absent"), ("istanbul", 3, "forfeit"), ("karawane", 2, "bot"),
         ("samarkand", 4, "absent"), ("yspahan", 3, "forfeit")]


def play(name: str, seats: int, policy: str, seed: int, max_commands: int = 6000) -> tbl.Table:
    rng = random.Random(seed)
    game = get_game(name)
    secret = seed.to_bytes(8, "big")
    table, events = tbl.EMPTY, []
    now = 1764250000.0

    def apply(seat, command):
        nonlocal table
        token = None if seat is None else token_hash(seat)
        new = tbl.decide(table, seat, token, command, Chance(secret, table.version), now=now)
        table = tbl.fold(new, table)
        events.extend(new)
        assert all(not isinstance(e, ClocksSet) for e in new[:-1]), new  # the clocks come last, once
        return new

    clock = {"per_decision": 15, "reserve": 40, "increment": 2, "on_timeout": policy}
    apply(None, tbl.newest_rules(tbl.CreateGame(name, "t", seats, {"clock": clock})))
    for seat in range(seats):
        apply(None, tbl.JoinSeat(f"p{seat}", token_hash(seat)))
    resigned = False
    for _ in range(max_commands):
        if table.status == tbl.OVER:
            break
        pending = tbl.due(table)
        assert pending and tbl.next_due(table) == pending[0].at  # a game in play always waits for something
        awaiting = [s for s in tbl.flow(table).awaiting if not tbl.out_reason(table, s)]
        roll = rng.random()
        if not resigned and roll < 0.002 * seats:
            resigned = True
            apply(rng.randrange(seats), Resign())
        elif awaiting and roll < 0.85:
            seat = rng.choice(awaiting)
            now += rng.choice((0.25, 3.0, 9.5))
            apply(seat, bot_command(game, table.state, seat, rng))
        else:  # the seats wait: what is due first happens, at its instant (or now, if that is later)
            first = pending[0]
            now = max(now, first.at)
            if first.kind == "timeout":
                apply(None, Timeout(first.seat, first.at))
            elif first.kind == "bot":
                move = bot_command(game, table.state, first.seat, rng)
                apply(None, PlayFor(first.seat, "random", msgspec.to_builtins(move)))
            else:
                apply(None, tbl.Tick(first.key, first.at))
        again = tbl.decode_table(tbl.encode_table(table))
        assert msgspec.json.encode(again) == msgspec.json.encode(table)  # (a result's details read back as lists)
        assert tbl.due(again) == tbl.due(table) and again.clock_marks == table.clock_marks
    else:
        pytest.fail(f"{name} not over after {max_commands} commands")
    assert msgspec.json.encode(tbl.fold(events)) == msgspec.json.encode(table)
    [ended] = [e for e in events if isinstance(e, GameEnded)]
    out = {e.seat for e in events if isinstance(e, SeatOut)}
    assert ended.winners and not out & set(ended.winners)
    return table


@pytest.mark.parametrize(("name", "seats", "policy"), CASES)
def test_a_game_with_clocks_is_played_to_its_end_with_timeouts_bots_and_leavers(name, seats, policy):
    for seed in range(2):
        play(name, seats, policy, 100 + seed)
