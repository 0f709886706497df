"""Seats the server's bots play from the start (``SeatBots``, ``POST /games/{id}/bots``; issue #19): each taken
seat is a ``BotSeated`` event (its name and strategy), the seat shows as a bot in the views and the lobby, the game
starts when the table is full as with any join, and the clock worker's takeover plays those seats (``due``: a bot's
move at once; ``PlayFor`` / ``BotMoved``)."""

from __future__ import annotations

import pytest

from contracts.table import (
    BOT_STRATEGIES,
    BotMoved,
    BotSeated,
    CreateGame,
    GameStarted,
    JoinSeat,
    LeaveSeat,
    PlayFor,
    SeatBots,
)
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation
from tests.domain.clock_toy import Move, toy_games  # noqa: F401 - the fixture
from tests.domain.harness import token_hash

SEED = b"bot-seats-seed"
pytestmark = pytest.mark.usefixtures("toy_games")


class Table:
    """A toy table driven command by command (as the engine folds them)."""

    def __init__(self, seats: int = 2, **create) -> None:
        self.table = tbl.EMPTY
        self.apply(None, None, CreateGame("toy", "t", seats, **create))

    def decide(self, seat, token, command, now=100.0):
        return tbl.decide(self.table, seat, token, command, Chance(SEED, self.table.version), now=now)

    def apply(self, seat, token, command, now=100.0):
        events = self.decide(seat, token, command, now)
        self.table = tbl.fold(events, self.table, [tbl.Origin(seat, "c")] * len(events))
        return events

    def refused(self, seat, token, command, code):
        before = self.table
        with pytest.raises(RuleViolation) as info:
            self.decide(seat, token, command)
        assert info.value.code == code, info.value.message
        assert self.table is before


def test_bots_take_every_free_seat_with_their_strategy_and_the_game_starts():
    game = Table(seats=3)
    game.apply(None, None, JoinSeat("ali", token_hash(1), seat=1))
    events = game.apply(None, None, SeatBots("greedy"))
    assert events[:2] == [BotSeated(0, "bot 1", "greedy"), BotSeated(2, "bot 3", "greedy")]
    assert isinstance(events[2], GameStarted) and game.table.status == tbl.PLAYING
    seats = tbl.seats_of(game.table)
    assert [(s.name, s.bot) for s in seats] == [("bot 1", "greedy"), ("ali", None), ("bot 3", "greedy")]
    view = tbl.views(game.table, "g")[1]
    assert view.seats == seats
    assert [s.bot for s in view.clock.seats] == [True, False, True]  # as a seat out of the game: bots play it


def test_named_seats_only_and_the_game_waits_for_the_others():
    game = Table(seats=3)
    assert game.apply(None, None, SeatBots("random", seats=(2,))) == [BotSeated(2, "bot 3", "random")]
    assert game.table.status == tbl.OPEN and tbl.bot_of(game.table, 2) == "random"
    game.apply(None, None, JoinSeat("ali", token_hash(0)))
    events = game.apply(None, None, JoinSeat("bea", token_hash(1)))  # the last free seat: a join starts it
    assert isinstance(events[-1], GameStarted) and game.table.status == tbl.PLAYING


def test_a_bots_seat_gives_no_entropy_and_the_chance_mixes_the_players_only():
    game = Table(seats=2)
    game.apply(None, None, JoinSeat("ali", token_hash(0), entropy="ab" * 32))
    game.apply(None, None, SeatBots("greedy"))
    assert tbl.entropies(game.table) == ("ab" * 32, "") and game.table.mix == ("ab" * 32, "")


def test_the_takeover_plays_a_bots_seat_at_once_and_its_moves_are_the_bots():
    game = Table(seats=2)
    game.apply(None, None, SeatBots("seeker", seats=(0,)))
    game.apply(None, None, JoinSeat("ali", token_hash(1)))
    awaiting = tbl.flow(game.table).awaiting
    assert awaiting == (0,)
    assert tbl.bot_plays(game.table, 0) and not tbl.bot_plays(game.table, 1)
    [due] = tbl.due(game.table)
    assert (due.kind, due.seat) == ("bot", 0)
    events = game.apply(None, None, PlayFor(0, "seeker", {"type": "toy.Move"}))
    assert events[0] == BotMoved(0, "seeker")
    assert tbl.flow(game.table).awaiting == (1,) and tbl.due(game.table) == ()  # a player's turn: nothing due
    game.apply(1, token_hash(1), Move())
    assert [(d.kind, d.seat) for d in tbl.due(game.table)] == [("bot", 0)]


def test_a_bots_seat_has_no_clock_on_a_table_with_clocks():
    game = Table(seats=2, options={"clock": {"per_decision": 10}})
    game.apply(None, None, SeatBots("greedy", seats=(0,)))
    game.apply(None, None, JoinSeat("ali", token_hash(1)))
    assert game.table.clocks[0].deadline is None  # played at once, never timed out
    assert [(d.kind, d.seat) for d in tbl.due(game.table)] == [("bot", 0)]
    game.apply(None, None, PlayFor(0, "greedy", {"type": "toy.Move"}), now=101.0)
    assert game.table.clocks[1].deadline == 111.0


def test_nobody_sends_a_bots_seats_commands_nor_gives_it_back():
    game = Table(seats=2)
    game.apply(None, None, SeatBots("greedy", seats=(0,)))
    game.refused(0, "", LeaveSeat(), "bad_token")  # the seat has no token: an empty one is no token
    game.refused(0, token_hash(0), LeaveSeat(), "bad_token")
    game.apply(None, None, JoinSeat("ali", token_hash(1)))
    game.refused(0, "", Move(), "bad_token")


@pytest.mark.parametrize(("command", "code"), [
    (SeatBots("greedy", seats=(1,)), "seat_taken"),
    (SeatBots("greedy", seats=(2,)), "no_such_seat"),
    (SeatBots("greedy", seats=(-1,)), "no_such_seat"),
    (SeatBots("greedy", seats=()), "bad_seats"),
    (SeatBots("greedy", seats=(0, 0)), "bad_seats"),
    (SeatBots("clever"), "unknown_strategy"),
])
def test_bots_are_refused_a_seat_as_a_join_is(command, code):
    game = Table(seats=2)
    game.apply(None, None, JoinSeat("ali", token_hash(1), seat=1))
    game.refused(None, None, command, code)


def test_bots_take_no_seat_of_a_started_game():
    game = Table(seats=2)
    game.apply(None, None, SeatBots("greedy"))
    assert game.table.status == tbl.PLAYING
    game.refused(None, None, SeatBots("greedy"), "game_started")


def test_a_private_game_takes_bots_with_its_invite_only():
    game = Table(seats=2, invite_hash="i" * 64)
    game.refused(None, None, SeatBots("greedy"), "bad_invite")
    game.refused(None, None, SeatBots("greedy", invite_hash="x" * 64), "bad_invite")
    assert [type(e) for e in game.apply(None, None, SeatBots("greedy", invite_hash="i" * 64))][:2] == [BotSeated] * 2


def test_bots_take_seats_for_no_seat_and_with_no_token():
    game = Table(seats=2)
    game.refused(0, None, SeatBots("greedy"), "not_allowed")
    game.refused(None, token_hash(0), SeatBots("greedy"), "not_allowed")


def test_the_strategies_a_seat_may_be_given_are_the_ones_the_server_plays():
    from services.bots import STRATEGIES
    assert set(BOT_STRATEGIES) == set(STRATEGIES)


def test_a_game_of_bots_only_ends_by_the_takeovers_moves():
    game = Table(seats=3)
    game.apply(None, None, SeatBots("random"))
    moves = 0
    while game.table.status == tbl.PLAYING:
        dues = tbl.due(game.table)
        assert [d.kind for d in dues] == ["bot"] * len(dues) and dues
        for due in dues:
            game.apply(None, None, PlayFor(due.seat, "random", {"type": "toy.Move"}))
            moves += 1
    assert game.table.status == tbl.OVER and moves == 6
