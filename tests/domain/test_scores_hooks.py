"""Every game's ``scores(state)`` hook (issue #19): the points each seat has now, from the game's rules. The table
uses it when a game ends because one seat is left in it (the others resigned or forfeited): ``GameEnded.scores``
is the hook's, not zeros. At the game's own end it gives the scores the rules gave."""

from __future__ import annotations

import random

import msgspec
import pytest

from contracts.table import GameEnded, Resign
from domain import table as tbl
from domain.chance import Chance
from domain.istanbul import rules as istanbul_rules
from domain.karawane import rules as karawane_rules
from domain.kernel import bot_command, get_game
from domain.samarkand import rules as samarkand_rules
from tests.domain.harness import start_table, token_hash

GAMES = [("yspahan", 2), ("samarkand", 3), ("istanbul", 2), ("karawane", 2)]


def step(table: tbl.Table, rng: random.Random, seed: bytes) -> tbl.Table:
    """One command of an awaited seat: the game's own bot (1001 Karawane's seeker ends its games), else random."""
    game = tbl.game_of(table)
    seat = rng.choice(tbl.flow(table).awaiting)
    command = bot_command(game, table.state, seat, rng)
    return tbl.fold(tbl.decide(table, seat, token_hash(seat), command, Chance(seed, table.version)), table)


@pytest.mark.parametrize(("name", "seats"), GAMES)
def test_every_game_has_the_hook_and_it_gives_the_rules_scores_at_the_end(name, seats):
    game = get_game(name)
    assert callable(getattr(game, "scores", None))
    seed = b"scores-" + name.encode()
    table, _ = start_table(game, seats, seed=seed)
    rng = random.Random(7)
    for n in range(30_000):
        if table.status == tbl.OVER:
            break
        now = game.scores(table.state)
        assert len(now) == seats and all(isinstance(s, int) for s in now)
        table = step(table, rng, seed)
    assert table.status == tbl.OVER, f"{name} did not end"
    assert tuple(game.scores(table.state)) == table.result.scores


def played_until(name: str, seats: int, scored: int) -> tuple[tbl.Table, bytes]:
    """A game played until some seat has at least ``scored`` points by the hook (still in play)."""
    game = get_game(name)
    seed = b"scored-" + name.encode()
    table, _ = start_table(game, seats, seed=seed)
    rng = random.Random(3)
    while max(game.scores(table.state)) < scored:
        assert table.status == tbl.PLAYING, f"{name} ended before a seat had {scored} points"
        table = step(table, rng, seed)
    return table, seed


@pytest.mark.parametrize(("name", "seats", "scored"), [("samarkand", 3, 5), ("istanbul", 2, 1), ("karawane", 2, 1),
                                                       ("yspahan", 2, 1)])
def test_a_game_ended_by_resignations_is_scored_by_the_games_hook_not_zeros(name, seats, scored):
    table, seed = played_until(name, seats, scored)
    expected = tuple(tbl.game_of(table).scores(table.state))
    assert any(expected)
    for seat in range(1, seats):  # every seat but 0 resigns: the last resignation ends the game
        events = tbl.decide(table, seat, token_hash(seat), Resign(), Chance(seed, table.version))
        table = tbl.fold(events, table)
    [ended] = [e for e in events if isinstance(e, GameEnded)]
    assert ended.scores == expected and ended.winners == (0,) and ended.details["ended_by"] == "resignation"


def test_istanbuls_points_are_each_seats_rubies():
    table, _ = start_table(get_game("istanbul"), 3, seed=b"rubies")
    state = table.state
    players = tuple(msgspec.structs.replace(p, rubies=r) for p, r in zip(state.players, (2, 0, 5)))
    assert istanbul_rules.scores(msgspec.structs.replace(state, players=players)) == (2, 0, 5)


def test_karawanes_points_are_the_gold_laid_out_at_home_not_the_gold_in_hand():
    table, _ = start_table(get_game("karawane"), 2, seed=b"gold")
    state = table.state
    rich = msgspec.structs.replace(state.players[0], ones=2, threes=1,
                                   hand=msgspec.structs.replace(state.players[0].hand, gold=4))
    assert karawane_rules.scores(msgspec.structs.replace(state, players=(rich, state.players[1]))) == (5, 0)


def test_samarkands_points_now_are_the_final_scoring_counted_on_the_game_as_it_stands():
    table, _ = played_until("samarkand", 4, 5)
    state = table.state
    totals = tuple(d.total for d in samarkand_rules.score(state))
    assert samarkand_rules.scores(state) == totals
    # wealth by money: the richest seat alone gets the table's first place
    richest = max(range(4), key=lambda s: state.players[s].money)
    rich = msgspec.structs.replace(state.players[richest], money=10_000)
    players = tuple(rich if s == richest else p for s, p in enumerate(state.players))
    details = samarkand_rules.score(msgspec.structs.replace(state, players=players))
    assert details[richest].wealth == max(d.wealth for d in details) > 0
