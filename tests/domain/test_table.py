"""The platform's own rules around every game: create, join, start, the generic checks, the end."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from contracts.table import CreateGame, GameCreated, GameEnded, GameStarted, JoinSeat, SeatJoined
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation, get_game
from tests.domain.harness import start_table, token_hash

SEED = b"table-seed"


def decide(table, command, seat=None, token=None):
    return tbl.decide(table, seat, token, command, Chance(SEED, table.version))


def refused(table, command, code, seat=None, token=None):
    with pytest.raises(RuleViolation) as info:
        decide(table, command, seat, token)
    assert info.value.code == code and info.value.message


def created(seats=3, **options):
    return tbl.fold(decide(tbl.EMPTY, CreateGame("samarkand", "t", seats, options)))


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (CreateGame("chess", "t", 2), "unknown_game"),
        (CreateGame("samarkand", "t", 2), "bad_seat_count"),
        (CreateGame("samarkand", "t", 6), "bad_seat_count"),
        (CreateGame("samarkand", " ", 3), "bad_title"),
        (CreateGame("samarkand", "t", 3, {"no_such_option": 1}), "bad_options"),
        (CreateGame("samarkand", "t", 3, {"hidden_goods": "yes"}), "bad_options"),
    ],
)
def test_a_game_with_bad_settings_is_not_created(command, code):
    refused(tbl.EMPTY, command, code)


def test_a_game_is_created_with_only_the_hash_of_its_seed():
    [event] = decide(tbl.EMPTY, CreateGame("samarkand", "Friday", 3))
    assert isinstance(event, GameCreated) and event.seed_hash == hashlib.sha256(SEED).hexdigest()
    refused(tbl.fold([event]), CreateGame("samarkand", "again", 3), "game_exists")


def test_commands_to_a_game_that_does_not_exist_are_refused():
    refused(tbl.EMPTY, JoinSeat("a", "h"), "game_not_found")


def test_seats_are_taken_once_and_the_last_one_starts_the_game():
    table = created(3)
    table = tbl.fold(decide(table, JoinSeat("a", "h0", seat=1)), table)
    refused(table, JoinSeat("b", "h1", seat=1), "seat_taken")
    refused(table, JoinSeat("b", "h1", seat=3), "no_such_seat")
    refused(table, JoinSeat(" ", "h1"), "bad_name")
    refused(table, msgspec.json.decode(b'{"type":"samarkand.Pass"}', type=get_game("samarkand").command_types[1]),
            "game_not_started", seat=1, token="h0")
    [joined] = decide(table, JoinSeat("b", "h1"))
    assert joined == SeatJoined(0, "b", "h1")  # the lowest free seat
    table = tbl.fold([joined], table)
    last = decide(table, JoinSeat("c", "h2"))
    assert last[0] == SeatJoined(2, "c", "h2") and last[1] == GameStarted() and len(last) > 2
    table = tbl.fold(last, table)
    assert table.status == tbl.PLAYING
    refused(table, JoinSeat("d", "h3"), "game_started")


def test_a_command_needs_the_seats_token_and_its_turn():
    game = get_game("samarkand")
    table, _ = start_table(game, 3)
    seat = tbl.flow(table).awaiting[0]
    command = game.legal_commands(table.state, seat)[0]
    refused(table, command, "bad_token", seat=seat, token=token_hash(seat + 1))
    refused(table, command, "bad_token", seat=seat, token=None)
    refused(table, command, "no_such_seat", seat=7, token=token_hash(seat))
    assert decide(table, command, seat, token_hash(seat))


def test_the_last_event_reveals_the_seed_and_nothing_is_accepted_after_it():
    from tests.domain.harness import playout

    table, events = playout(get_game("samarkand"), 3, seed=5)
    ended = events[-1]
    assert isinstance(ended, GameEnded) and hashlib.sha256(bytes.fromhex(ended.seed)).hexdigest() == table.seed_hash
    assert table.status == tbl.OVER and table.result.scores == ended.scores
    refused(table, get_game("samarkand").command_types[1](), "game_over", seat=0, token=token_hash(0))


def test_a_stored_game_whose_option_was_since_removed_still_loads():
    [event] = decide(tbl.EMPTY, CreateGame("samarkand", "t", 3))
    old = msgspec.structs.replace(event, options={**event.options, "an_option_removed_later": True})
    assert tbl.fold([old]).options == get_game("samarkand").options_type()


def test_chance_is_the_same_for_the_same_seed_and_position_and_differs_otherwise():
    assert Chance(b"s", 3).shuffled(range(20)) == Chance(b"s", 3).shuffled(range(20))
    assert Chance(b"s", 3).shuffled(range(20)) != Chance(b"s", 4).shuffled(range(20))
    assert Chance(b"s", 3).shuffled(range(20)) != Chance(b"t", 3).shuffled(range(20))
    rolls = Chance(b"s", 0).roll(6000)
    assert set(rolls) == {1, 2, 3, 4, 5, 6} and all(800 < rolls.count(v) < 1200 for v in range(1, 7))


def test_an_open_game_is_cancelled_by_the_platform_and_then_refuses_everything():
    from contracts.table import CancelGame, GameCancelled

    table = tbl.fold(decide(created(3), JoinSeat("a", "h0")), created(3))
    refused(table, CancelGame(), "not_allowed", seat=0, token="h0")  # no seat may cancel it
    [event] = decide(table, CancelGame("expired"))
    assert event == GameCancelled("expired")
    table = tbl.evolve(table, event)
    assert table.status == tbl.CANCELLED and tbl.flow(table).phase == "cancelled"
    refused(table, JoinSeat("b", "h1"), "game_cancelled")
    refused(table, CancelGame(), "game_cancelled")
    assert tbl.redact(table, event, None) is event
    assert all(v.status == "cancelled" for v in tbl.views(table, "g").values())


def test_a_started_game_cannot_be_cancelled():
    from contracts.table import CancelGame

    table, _ = start_table(get_game("samarkand"), 3)
    refused(table, CancelGame(), "game_started")


def test_a_seat_is_given_back_before_the_start_and_taken_again():
    from contracts.table import LeaveSeat, SeatLeft, SeatOut

    table = created(3)
    table = tbl.fold(decide(table, JoinSeat("a", "h0")), table)
    refused(table, LeaveSeat(), "bad_token", seat=0, token="other")
    [left] = decide(table, LeaveSeat(), seat=0, token="h0")
    assert left == SeatLeft(0)
    table = tbl.evolve(table, left)
    assert table.players[0] is None and table.status == tbl.OPEN
    table = tbl.fold(decide(table, JoinSeat("b", "h1")), table)
    assert table.players[0].name == "b"
    started, _ = start_table(get_game("samarkand"), 3)
    # after the start, leaving is resigning (issue #19): the seat is out, bots play for it
    assert decide(started, LeaveSeat(), seat=0, token=token_hash(0)) == [SeatOut(0, "resigned")]


def test_the_creator_cancels_an_open_game_and_nobody_else_can():
    from contracts.table import CancelGame, GameCancelled

    table = tbl.fold(decide(tbl.EMPTY, CreateGame("samarkand", "t", 3, creator_hash="c")))
    refused(table, CancelGame(), "not_allowed", token="not-the-creator")
    refused(table, CancelGame(), "not_allowed", seat=0, token="c")
    assert decide(table, CancelGame(), token="c") == [GameCancelled("cancelled")]
    no_creator = created(3)
    refused(no_creator, CancelGame(), "not_allowed", token="")


def test_a_private_game_is_joined_with_its_invite_code_and_its_hashes_stay_out_of_the_history():
    [event] = decide(tbl.EMPTY, CreateGame("samarkand", "t", 3, creator_hash="c", invite_hash="i"))
    assert event.private and tbl.redact(tbl.fold([event]), event, None).invite_hash == ""
    assert tbl.redact(tbl.fold([event]), event, 0).creator_hash == ""
    table = tbl.fold([event])
    refused(table, JoinSeat("a", "h0"), "bad_invite")
    refused(table, JoinSeat("a", "h0", invite_hash="wrong"), "bad_invite")
    assert decide(table, JoinSeat("a", "h0", invite_hash="i"))
