"""The views the projector writes (``domain.table.views``, encoded as ``services.projector`` encodes them) are byte for
byte what each audience's view built on its own gives: its game's ``view(state, seat)`` (the single-seat function,
which shares nothing with the others) inside the table's header, flow, legal commands, undo and clocks.

``views`` builds what the audiences share once (the games' ``views``); this checks that sharing changes no byte of any
seat's or the spectator's document, over seeded random games of the four titles, with undo requests, to their end
or to a bound, at every version."""

from __future__ import annotations

import random
from typing import Any

import pytest

from contracts.readmodels import TableView
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import get_game
from services.store import keys
from services.store.codec import encoder
from tests.domain.harness import play_with_undos, start_table, token_hash
from tests.domain.karawane.support import seeker

SEATS = {"samarkand": (3, 5), "yspahan": (2, 4), "istanbul": (1, 3), "karawane": (2, 5)}


def one_by_one(table: tbl.Table, game_id: str) -> dict[int | None, TableView]:
    """Each audience's view made alone, as ``views`` made them before it shared anything."""
    game = tbl.game_of(table)
    now = tbl.flow(table)
    playing = table.status == tbl.PLAYING
    started = table.status in (tbl.PLAYING, tbl.OVER)
    return {
        seat: TableView(
            game_id=game_id, game=table.game, title=table.title, version=table.version, status=table.status,
            seat=seat, seats=tbl.seats_of(table), flow=now,
            legal=tuple(game.legal_commands(table.state, seat))
            if playing and seat in now.awaiting and not tbl.out_reason(table, seat) else (),
            view=game.view(table.state, seat) if started else None,
            result=table.result, unfair=table.unfair,
            undo=tbl.undo_view(table, seat) if started else None,
            forked_from=table.forked_from, clock=tbl.clock_view(table))
        for seat in tbl.audiences(table)
    }


def same_bytes(table: tbl.Table) -> None:
    written = {keys.audience(s): encoder.encode(v) for s, v in tbl.views(table, "g-1").items()}
    alone = {keys.audience(s): encoder.encode(v) for s, v in one_by_one(table, "g-1").items()}
    assert list(written) == list(alone)
    for audience, raw in alone.items():
        assert written[audience] == raw, f"version {table.version}, audience {audience}"


@pytest.mark.parametrize("name", sorted(SEATS))
@pytest.mark.parametrize("seed", [1, 2])
def test_the_views_written_are_each_audiences_own_view_byte_for_byte(name: str, seed: int) -> None:
    seats = SEATS[name][seed % 2]
    checked: list[Any] = []

    def check(played: Any) -> None:
        same_bytes(played.table)
        checked.append(played.table.version)

    played, _ = play_with_undos(name, seats, seed, "with_consent", 250, check)
    same_bytes(played.table)
    assert len(checked) > 50


@pytest.mark.parametrize("name", sorted(SEATS))
def test_the_views_of_a_whole_game_are_each_audiences_own_view_byte_for_byte(name: str) -> None:
    """To the end (the scores, the lifted screens): every 7th command's table and the last. Random legal commands,
    and 1001 Karawane's artifact seeker for its seats (random play rarely ends that game)."""
    game, seats, seed = get_game(name), SEATS[name][0], 11
    rng = random.Random(seed)
    table, _ = start_table(game, seats, seed=seed.to_bytes(8, "big"))
    for n in range(5_000):
        if table.status == tbl.OVER:
            break
        seat = tbl.flow(table).awaiting[0]
        legal = list(game.legal_commands(table.state, seat))
        command = seeker(rng, table.state, seat, legal) if name == "karawane" else rng.choice(legal)
        for event in tbl.decide(table, seat, token_hash(seat), command, Chance(seed.to_bytes(8, "big"), table.version)):
            table = tbl.evolve(table, event)
        if n % 7 == 0:
            same_bytes(table)
    assert table.status == tbl.OVER
    same_bytes(table)
