"""Turn clocks, game timers, leaving and bots at the table (issue #19; docs/rules-decisions.md, Clocks).

Time is data: every command is decided at an explicit ``now`` (the engine's clock, a fake one here), and the
table's clocks come only from the events."""

from __future__ import annotations

import msgspec
import pytest

from contracts.table import (
    BotMoved,
    ClockOptions,
    ClocksSet,
    CreateGame,
    GameCreated,
    GameEnded,
    JoinSeat,
    LeaveSeat,
    PlayFor,
    Resign,
    SeatAbsent,
    SeatClock,
    SeatOut,
    SeatReturned,
    SeatTimedOut,
    Tick,
    Timeout,
)
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation
from tests.domain.clock_toy import Move, Moved, toy_games  # noqa: F401 - the fixture
from tests.domain.harness import token_hash

SEED = b"clock-seed"
MOVE = {"type": "toy.Move"}

pytestmark = pytest.mark.usefixtures("toy_games")


class Clocked:
    """A table driven command by command at explicit instants, each event folded with its origin (as the engine
    does); ``events`` keeps them all."""

    def __init__(self, seats: int = 2, clock: dict | None = None, start: float = 100.0, game: str = "toy",
                 **options) -> None:
        self.table, self.events, self.origins, self.count = tbl.EMPTY, [], [], 0
        self.log = []  # (seat, token, command, now, events) of every command
        if clock is not None:
            options["clock"] = clock
        self.created = self.platform(CreateGame(game, "t", seats, options), start)
        for seat in range(seats):  # each takes the lowest free seat: its own
            self.started = self.platform(JoinSeat(f"p{seat}", token_hash(seat)), start)

    def decide(self, seat, token, command, now):
        return tbl.decide(self.table, seat, token, command, Chance(SEED, self.table.version), now=now)

    def apply(self, seat, token, command, now):
        events = self.decide(seat, token, command, now)
        self.count += 1
        origin = tbl.Origin(seat, f"c{self.count}")
        self.table = tbl.fold(events, self.table, [origin] * len(events))
        self.events.extend(events)
        self.origins.extend([origin] * len(events))
        self.log.append((seat, token, command, now, events))
        return events

    def platform(self, command, now):
        return self.apply(None, None, command, now)

    def seat(self, seat, command, now):
        return self.apply(seat, token_hash(seat), command, now)

    def move(self, seat, now):
        return self.seat(seat, Move(), now)

    def refused(self, seat, command, now, code):
        token = None if seat is None else token_hash(seat)
        with pytest.raises(RuleViolation) as info:
            self.decide(seat, token, command, now)
        assert info.value.code == code, info.value.message

    def clock(self, seat):
        return self.table.clocks[seat]


CLOCK = {"per_decision": 10, "reserve": 60, "increment": 5}


# --- options -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("clock", [
    {"per_decision": -1}, {"reserve": -0.5}, {"increment": -2}, {"on_timeout": "nap"}, {"colour": "red"}, "fast",
    {"per_decision": True}, {"reserve": float("inf")}, {"per_decision": float("nan")}, {"reserve": "60"},
])
def test_a_clock_that_is_not_a_valid_clock_option_is_refused_with_bad_clock(clock):
    with pytest.raises(RuleViolation) as info:
        tbl.decide(tbl.EMPTY, None, None, CreateGame("toy", "t", 2, {"clock": clock}), Chance(SEED, 0))
    assert info.value.code == "bad_clock" and info.value.message


def test_the_clock_is_taken_out_of_the_games_options_and_stored_in_game_created():
    game = Clocked(clock={**CLOCK, "on_timeout": "absent"})
    [created] = game.created
    assert isinstance(created, GameCreated)
    assert created.clock == ClockOptions(10.0, 60.0, 5.0, "absent") and "clock" not in created.options
    assert game.table.clock == created.clock and tbl.has_clock(game.table)


def test_a_game_created_without_a_clock_has_none_and_never_sets_clocks():
    game = Clocked()
    assert game.created[0].clock is msgspec.UNSET and not tbl.has_clock(game.table)
    assert b"clock" not in msgspec.json.encode(game.created[0])  # stored as before clocks existed
    assert not any(isinstance(e, ClocksSet) for e in game.started + game.move(0, 101) + game.move(1, 102))
    assert tbl.due(game.table) == () and tbl.next_due(game.table) is None
    assert tbl.views(game.table, "g")[None].clock is None


def test_options_without_any_time_are_no_clock_but_are_kept():
    game = Clocked(clock={"on_timeout": "forfeit"})
    assert game.table.clock == ClockOptions(on_timeout="forfeit") and not tbl.has_clock(game.table)
    assert not any(isinstance(e, ClocksSet) for e in game.events)


# --- the clocks' arithmetic ------------------------------------------------------------------------------------

def test_the_start_sets_the_first_seats_deadline_from_per_decision_and_the_whole_reserve():
    game = Clocked(clock=CLOCK, start=100.0)
    assert game.started[-1] == ClocksSet(at=100.0, clocks=(SeatClock(170.0, 60.0), SeatClock(None, 60.0)))


def test_time_past_per_decision_comes_out_of_the_reserve_and_each_move_adds_the_increment():
    game = Clocked(clock=CLOCK, start=100.0)
    # seat 0 took 25 s: 15 past its 10 s, out of its 60 s reserve, plus 5 for the move
    assert game.move(0, 125.0)[-1] == ClocksSet(at=125.0, clocks=(SeatClock(None, 50.0), SeatClock(195.0, 60.0)))
    # seat 1 took 5 s: within per_decision, nothing out of its reserve, the increment added
    assert game.move(1, 130.0)[-1] == ClocksSet(at=130.0, clocks=(SeatClock(190.0, 50.0), SeatClock(None, 65.0)))
    # seat 0 took 90 s, more than its 10 + 50 (no Timeout came): its reserve is spent, not below 0
    assert game.move(0, 220.0)[-1] == ClocksSet(at=220.0, clocks=(SeatClock(None, 5.0), SeatClock(295.0, 65.0)))


def test_a_reserve_without_per_decision_runs_from_the_first_second_and_an_increment_alone_is_fischer():
    game = Clocked(clock={"reserve": 30, "increment": 2}, start=0.0)
    assert game.started[-1].clocks == (SeatClock(30.0, 30.0), SeatClock(None, 30.0))
    assert game.move(0, 12.5)[-1].clocks == (SeatClock(None, 19.5), SeatClock(42.5, 30.0))


def test_per_decision_alone_gives_each_decision_the_same_time():
    game = Clocked(clock={"per_decision": 20}, start=0.0)
    assert game.started[-1].clocks == (SeatClock(20.0, 0.0), SeatClock(None, 0.0))
    assert game.move(0, 19.0)[-1].clocks == (SeatClock(None, 0.0), SeatClock(39.0, 0.0))


def test_in_a_simultaneous_step_a_seat_keeps_its_deadline_while_the_others_answer():
    game = Clocked(seats=3, clock=CLOCK, start=0.0, simultaneous=True)
    assert game.started[-1].clocks == (SeatClock(70.0, 60.0),) * 3
    assert game.move(1, 20.0)[-1].clocks == (SeatClock(70.0, 60.0), SeatClock(None, 55.0), SeatClock(70.0, 60.0))
    assert game.move(0, 30.0)[-1].clocks == (SeatClock(None, 45.0), SeatClock(None, 55.0), SeatClock(70.0, 60.0))
    # the last answer ends the round: every seat owes a new decision, from now, with what its reserve is
    assert game.move(2, 40.0)[-1].clocks == (SeatClock(95.0, 45.0), SeatClock(105.0, 55.0), SeatClock(85.0, 35.0))
    assert game.table.clock_since == (40.0, 40.0, 40.0)


def test_a_seat_playing_again_restarts_its_clock_even_when_its_deadline_would_be_the_same():
    game = Clocked(clock={"reserve": 30}, start=0.0, simultaneous=True)
    # a pure reserve: after seat 0's answer and the next round, its deadline is where it was, but its clock restarted
    game.move(0, 10.0)
    events = game.move(1, 10.0)
    assert events[-1].clocks == (SeatClock(30.0, 20.0), SeatClock(30.0, 20.0))
    assert game.table.clock_since == (10.0, 10.0)


def test_a_command_that_changes_no_clock_sets_none():
    game = Clocked(seats=3, clock=CLOCK, start=0.0, simultaneous=True)
    game.move(0, 5.0)
    # seat 1's answer changes only its own clock; seat 2's stays: one ClocksSet, with seat 2's deadline kept
    assert game.move(1, 6.0)[-1].clocks[2] == SeatClock(70.0, 60.0)
    game.platform(Timeout(2, 70.0), 70.0)  # policy bot: nothing but the timeout (the seat's clock ran out as it is)
    assert not isinstance(game.events[-1], ClocksSet)


# --- due -------------------------------------------------------------------------------------------------------

def test_due_lists_each_awaited_seats_timeout_at_its_deadline_and_next_due_is_the_earliest():
    game = Clocked(seats=3, clock=CLOCK, start=0.0, simultaneous=True)
    game.move(1, 20.0)
    assert tbl.due(game.table) == (tbl.Due(70.0, "timeout", 0), tbl.Due(70.0, "timeout", 2))
    assert tbl.next_due(game.table) == 70.0
    game.move(0, 30.0)
    game.move(2, 40.0)
    assert [d.at for d in tbl.due(game.table)] == [85.0, 95.0, 105.0] and tbl.next_due(game.table) == 85.0


def test_nothing_is_due_once_the_game_is_over():
    game = Clocked(clock=CLOCK, start=0.0, moves=2)
    game.move(0, 1.0)
    ended = game.move(1, 2.0)
    assert isinstance(ended[-1], GameEnded)  # no ClocksSet after the end: a game over has no clocks
    assert tbl.due(game.table) == () and tbl.next_due(game.table) is None


# --- timeouts --------------------------------------------------------------------------------------------------

def test_a_timeout_is_refused_before_its_deadline_and_for_a_deadline_that_is_not_the_seats():
    game = Clocked(clock=CLOCK, start=100.0)
    game.refused(None, Timeout(0, 170.0), 169.9, "not_due")
    game.refused(None, Timeout(0, 171.0), 171.0, "not_due")
    game.refused(None, Timeout(1, 170.0), 170.0, "not_due")  # seat 1 is not awaited
    game.refused(None, Timeout(5, 170.0), 170.0, "no_such_seat")


def test_a_timeout_made_moot_by_the_seats_move_is_refused():
    game = Clocked(clock=CLOCK, start=100.0)
    game.move(0, 169.0)  # in time
    game.refused(None, Timeout(0, 170.0), 170.0, "not_due")


def test_timeouts_ticks_and_bots_moves_are_the_platforms_alone():
    game = Clocked(clock=CLOCK, start=100.0)
    for command in (Timeout(0, 170.0), Tick("x", 1.0), PlayFor(0, "random", MOVE)):
        with pytest.raises(RuleViolation) as info:
            game.decide(0, token_hash(0), command, 500.0)
        assert info.value.code == "not_allowed"


def test_policy_bot_a_bot_plays_the_one_decision_the_seat_timed_out_on():
    game = Clocked(clock=CLOCK, start=100.0)
    assert game.platform(Timeout(0, 170.0), 170.5) == [SeatTimedOut(0, 170.0)]  # its clock stays: it ran out
    assert tbl.stood_in(game.table, 0) and tbl.due(game.table) == (tbl.Due(100.0, "bot", 0),)
    game.refused(None, Timeout(0, 170.0), 171.0, "not_due")  # fired once
    game.refused(None, PlayFor(1, "random", MOVE), 171.0, "not_stood_in")
    game.refused(None, PlayFor(0, "random", {"type": "toy.Jump"}), 171.0, "bad_command")
    events = game.platform(PlayFor(0, "greedy", MOVE), 171.0)
    # the bot's move is the seat's: its reserve is spent (+ the increment), seat 1's clock starts
    assert events == [BotMoved(0, "greedy"), Moved(0),
                      ClocksSet(at=171.0, clocks=(SeatClock(None, 5.0), SeatClock(241.0, 60.0)))]
    assert not tbl.stood_in(game.table, 0)
    game.move(1, 180.0)
    # seat 0 plays its next decision itself, on its clock again
    assert tbl.due(game.table) == (tbl.Due(180.0 + 10.0 + 5.0, "timeout", 0),)
    game.refused(None, PlayFor(0, "random", MOVE), 181.0, "not_stood_in")


def test_policy_bot_the_seat_may_still_play_the_decision_itself_before_the_bot():
    game = Clocked(clock=CLOCK, start=100.0)
    game.platform(Timeout(0, 170.0), 170.0)
    assert game.move(0, 172.0) == [Moved(0), ClocksSet(at=172.0, clocks=(SeatClock(None, 5.0),
                                                                           SeatClock(242.0, 60.0)))]
    game.refused(None, PlayFor(0, "random", MOVE), 173.0, "not_stood_in")


def test_policy_absent_bots_play_every_decision_until_the_seat_sends_a_command():
    game = Clocked(clock={**CLOCK, "on_timeout": "absent"}, start=100.0)
    assert game.platform(Timeout(0, 170.0), 171.0) == [
        SeatTimedOut(0, 170.0), SeatAbsent(0), ClocksSet(at=171.0, clocks=(SeatClock(None, 0.0),
                                                                            SeatClock(None, 60.0)))]
    # no clock runs while a bot is due at once: seat 1 is not awaited yet
    assert tbl.due(game.table) == (tbl.Due(171.0, "bot", 0),)
    game.platform(PlayFor(0, "random", MOVE), 172.0)
    game.move(1, 180.0)
    assert tbl.due(game.table) == (tbl.Due(180.0, "bot", 0),)  # still absent: its next decision too
    game.platform(PlayFor(0, "random", MOVE), 181.0)
    # back: a command of its token, even one the rules refuse (not its turn), brings it back
    assert game.move(0, 185.0) == [SeatReturned(0)]
    assert game.table.absent == ()
    game.move(1, 186.0)
    assert tbl.due(game.table) == (tbl.Due(186.0 + 10.0 + 0.0, "timeout", 0),)
    game.refused(None, PlayFor(0, "random", MOVE), 187.0, "not_stood_in")


def test_policy_absent_a_returning_seats_move_follows_its_return():
    game = Clocked(clock={**CLOCK, "on_timeout": "absent"}, start=100.0)
    game.platform(Timeout(0, 170.0), 171.0)
    assert game.move(0, 175.0) == [SeatReturned(0), Moved(0),
                                   ClocksSet(at=175.0, clocks=(SeatClock(None, 0.0), SeatClock(245.0, 60.0)))]


def test_policy_forfeit_ends_a_two_seat_game_with_the_other_seat_the_winner():
    game = Clocked(clock={**CLOCK, "on_timeout": "forfeit"}, start=100.0)
    game.move(0, 101.0)
    events = game.platform(Timeout(1, 171.0), 171.0)
    seed = SEED.hex()
    assert events == [SeatTimedOut(1, 171.0), SeatOut(1, "forfeited"),
                      GameEnded(scores=(1, 0), winners=(0,), seed=seed,
                                details={"ended_by": "forfeit", "out": {"1": "forfeited"}})]
    assert game.table.status == tbl.OVER and tbl.due(game.table) == ()


def test_policy_forfeit_with_more_seats_left_a_bot_plays_the_forfeited_seat_and_it_never_wins():
    game = Clocked(seats=3, clock={**CLOCK, "on_timeout": "forfeit"}, start=0.0, moves=6)
    events = game.platform(Timeout(0, 70.0), 70.0)
    assert events == [SeatTimedOut(0, 70.0), SeatOut(0, "forfeited"),
                      ClocksSet(at=70.0, clocks=(SeatClock(None, 0.0), SeatClock(None, 60.0), SeatClock(None, 60.0)))]
    assert tbl.due(game.table) == (tbl.Due(70.0, "bot", 0),)  # still its turn: a bot plays it, at once
    game.platform(PlayFor(0, "random", MOVE), 71.0)
    assert tbl.due(game.table) == (tbl.Due(141.0, "timeout", 1),)
    game.move(1, 72.0)
    game.move(2, 73.0)
    game.platform(PlayFor(0, "random", MOVE), 74.0)
    game.move(1, 75.0)
    ended = game.move(2, 76.0)[-1]
    # every seat made 2 moves: the game's winners are all three; the forfeited seat is not among them
    assert ended == GameEnded(scores=(2, 2, 2), winners=(1, 2), seed=SEED.hex(), details={"out": {"0": "forfeited"}})
    game.refused(0, Move(), 79.0, "game_over")


# --- resigning ---------------------------------------------------------------------------------------------------

def test_resigning_a_two_seat_game_ends_it_at_once_with_the_other_seat_the_winner():
    game = Clocked()
    game.move(0, 101.0)
    assert game.seat(0, Resign(), 102.0) == [
        SeatOut(0, "resigned"), GameEnded(scores=(1, 0), winners=(1,), seed=SEED.hex(),
                                          details={"ended_by": "resignation", "out": {"0": "resigned"}})]


def test_leaving_after_the_start_is_resigning_and_an_out_seat_sends_nothing_more():
    game = Clocked(seats=3)
    assert game.seat(1, LeaveSeat(), 101.0) == [SeatOut(1, "resigned")]  # no clock: no ClocksSet
    for command in (Resign(), LeaveSeat(), Move()):
        game.refused(1, command, 102.0, "seat_out")
    game.refused(None, Resign(), 102.0, "no_such_seat")
    game.move(0, 103.0)
    assert tbl.due(game.table) == (tbl.Due(0.0, "bot", 1),)  # a bot plays it at once, clock or not
    view = tbl.views(game.table, "g")
    assert view[1].legal == () and view[None].clock.seats[1].out == "resigned" and view[None].clock.seats[1].bot


def test_resigning_with_a_clock_stops_the_seats_clock():
    game = Clocked(seats=3, clock=CLOCK, start=0.0)
    events = game.seat(0, Resign(), 30.0)
    assert events == [SeatOut(0, "resigned"), ClocksSet(at=30.0, clocks=(SeatClock(None, 40.0),
                                                                          SeatClock(None, 60.0),
                                                                          SeatClock(None, 60.0)))]
    assert tbl.due(game.table) == (tbl.Due(30.0, "bot", 0),)


def test_when_nobody_the_game_names_a_winner_is_left_the_best_scored_seats_left_win():
    game = Clocked(seats=3, moves=5)
    for seat, now in ((0, 1.0), (1, 2.0), (2, 3.0), (0, 4.0)):
        game.move(seat, now)
    game.seat(0, Resign(), 5.0)  # seat 0 made the most moves: the game would name it alone
    ended = game.move(1, 6.0)[-1]
    assert ended == GameEnded(scores=(2, 2, 1), winners=(1,), seed=SEED.hex(), details={"out": {"0": "resigned"}})


# --- views, history, snapshots ---------------------------------------------------------------------------------

def test_every_reader_sees_the_same_clocks_each_seats_deadline_reserve_and_who_a_bot_plays():
    from contracts.table import ClockView, SeatClockView

    game = Clocked(seats=3, clock={**CLOCK, "on_timeout": "absent"}, start=0.0)
    game.platform(Timeout(0, 70.0), 70.0)
    game.platform(PlayFor(0, "random", MOVE), 71.0)
    game.seat(2, Resign(), 72.0)
    views = tbl.views(game.table, "g")
    expected = ClockView(options=ClockOptions(10.0, 60.0, 5.0, "absent"), seats=(
        SeatClockView(0, None, 0.0, absent=True, bot=True), SeatClockView(1, 141.0, 60.0),
        SeatClockView(2, None, 60.0, out="resigned", bot=True)), at=71.0)  # the resignation changed no clock
    assert all(view.clock == expected for view in views.values())
    assert views[2].legal == ()  # out: bots play it, it sends nothing


def test_a_finished_game_shows_no_running_clock():
    game = Clocked(clock=CLOCK, start=0.0, moves=2)
    game.move(0, 1.0)
    game.move(1, 2.0)
    clock = tbl.views(game.table, "g")[None].clock
    assert clock is not None and all(s.deadline is None and not s.bot for s in clock.seats) and clock.timer is None


def test_the_clock_events_are_public_in_the_history():
    game = Clocked(seats=3, clock={**CLOCK, "on_timeout": "absent"}, start=0.0)
    game.platform(Timeout(0, 70.0), 70.0)
    game.platform(PlayFor(0, "random", MOVE), 71.0)
    game.move(1, 72.0)
    game.move(0, 73.0)
    game.seat(2, Resign(), 74.0)
    clock_events = [e for e in game.events if type(e).__struct_config__.tag.startswith("table.") and isinstance(
        e, (ClocksSet, SeatTimedOut, SeatAbsent, SeatReturned, SeatOut, BotMoved))]
    assert {type(e) for e in clock_events} == {ClocksSet, SeatTimedOut, SeatAbsent, SeatReturned, SeatOut, BotMoved}
    for event in clock_events:
        assert all(tbl.redact(game.table, event, seat) is event for seat in (0, 1, 2, None))


def test_a_snapshot_carries_the_clocks_the_timer_and_who_is_absent_out_or_stood_in():
    game = Clocked(seats=4, clock={**CLOCK, "on_timeout": "absent"}, start=0.0)
    game.platform(Timeout(0, 70.0), 70.0)  # absent
    game.seat(3, Resign(), 71.0)  # out
    tables = [tbl.EMPTY]
    for event, origin in zip(game.events, game.origins):
        tables.append(tbl.evolve(tables[-1], event, origin))
    bot = Clocked(clock=CLOCK, start=0.0)
    bot.platform(Timeout(0, 70.0), 70.0)  # stood in
    timed = Clocked(game="toytimed", timer=5.0, clock=CLOCK, start=0.0)
    for table in (*tables, bot.table, timed.table):
        again = tbl.decode_table(tbl.encode_table(table))
        assert again == table and tbl.due(again) == tbl.due(table)
    assert tables[-1].absent == (0,) and tables[-1].out[3] == "resigned" and tbl.stood_in(bot.table, 0)
    assert timed.table.timer is not None


def test_a_snapshot_made_before_clocks_reads_with_none():
    from domain.kernel import get_game

    class Before(msgspec.Struct):  # the Table's fields before issue #19, as a snapshot stored them
        game: str = ""
        seats: int = 0
        status: str = ""
        version: int = 0

    old = tbl.decode_table(msgspec.msgpack.encode(Before("toy", 2, "playing", 7)))
    assert get_game("toy") and old.clock is None and old.clocks == () and old.out == () and old.absent == ()
    assert tbl.out_reason(old, 1) == "" and not tbl.stood_in(old, 1) and not tbl.has_clock(old)


# --- a re-run -------------------------------------------------------------------------------------------------

def test_each_command_decided_again_at_its_instant_gives_the_same_events():
    """What ``souk verify`` does with a record (``services.history.verify.rerun`` passes each command's
    recorded_at as ``now``), on the bare table: every kind of clock event, bots' moves and a resignation."""
    t = 1764250000.25
    game = Clocked(seats=3, clock={**CLOCK, "on_timeout": "absent"}, start=t)
    game.move(0, t + 3.5)
    game.platform(Timeout(1, t + 3.5 + 70.0), t + 73.6)
    game.platform(PlayFor(1, "greedy", MOVE), t + 73.7)
    game.move(2, t + 80.125)
    game.move(1, t + 81.0)  # back, though not its turn
    game.move(0, t + 99.0)
    game.move(1, t + 150.0)
    game.seat(2, Resign(), t + 151.0)
    table = tbl.EMPTY
    for seat, token, command, now, events in game.log:
        again = tbl.decide(table, seat, token, command, Chance(SEED, table.version), now=now)
        assert msgspec.json.encode(again) == msgspec.json.encode(events)
        table = tbl.fold(again, table)
    assert table == tbl.fold(game.events)
    kinds = {type(e) for e in game.events}
    assert {ClocksSet, SeatTimedOut, SeatAbsent, SeatReturned, SeatOut, BotMoved} <= kinds


def test_a_game_ended_by_a_resignation_reports_the_games_scores_now_when_it_has_the_hook():
    from domain.kernel import get_game
    from tests.domain.harness import start_table

    yspahan = get_game("yspahan")
    table, _ = start_table(yspahan, 2)
    table = msgspec.structs.replace(table, state=msgspec.structs.replace(table.state, players=tuple(
        msgspec.structs.replace(p, score=7 * i) for i, p in enumerate(table.state.players))))
    [out, ended] = tbl.decide(table, 1, token_hash(1), Resign(), Chance(SEED, table.version), now=5.0)
    assert ended.scores == (0, 7) and ended.winners == (0,) and ended.details["ended_by"] == "resignation"


def test_before_the_start_the_views_show_the_clock_options_and_each_seats_whole_reserve():
    table = tbl.EMPTY
    table = tbl.fold(tbl.decide(table, None, None, CreateGame("toy", "t", 2, {"clock": CLOCK}), Chance(SEED, 0)))
    table = tbl.fold(tbl.decide(table, None, None, JoinSeat("a", token_hash(0)), Chance(SEED, 1), now=3.0), table)
    clock = tbl.views(table, "g")[None].clock
    assert clock.options == ClockOptions(10.0, 60.0, 5.0) and [(s.deadline, s.reserve) for s in clock.seats] == [
        (None, 60.0), (None, 60.0)]
    assert tbl.due(table) == () and table.clocks == ()  # nothing runs before the start
