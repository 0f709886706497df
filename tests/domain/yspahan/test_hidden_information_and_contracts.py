"""Per-seat views, the redacted history, and the contracts (tags, strictness, evolution, options)."""

from __future__ import annotations

from typing import Union

import msgspec
import pytest

from contracts import yspahan as c
from contracts.table import TABLE_COMMANDS, TABLE_EVENTS, CreateGame
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import Game, RuleViolation
from domain.yspahan import GAME
from tests.domain.harness import Spec, start_table
from tests.domain.yspahan.support import draws, opening, random_game, roll


def dealt() -> Spec:
    return Spec(GAME, 3).given(
        opening(3, top=("take_gold", "exchange", "sell_gold"))
        + draws(0, "take_gold")
        + draws(1, "exchange", "sell_gold")
    )


def test_a_seat_sees_its_own_hand_and_only_the_size_of_the_others():
    state = dealt().state
    view = GAME.view(state, 0)
    assert view.hand == ("take_gold",)
    assert [p.hand_size for p in view.players] == [1, 2, 0]
    assert b"exchange" not in msgspec.json.encode(view) and b"sell_gold" not in msgspec.json.encode(view)
    assert GAME.view(state, 1).hand == ("exchange", "sell_gold")


def test_a_spectator_sees_no_hand_and_nobody_sees_the_deck_order():
    state = dealt().state
    view = GAME.view(state, None)
    assert view.seat is None and view.hand is None
    assert view.deck_size == 15
    for seat in (None, 0, 1, 2):
        encoded = msgspec.json.encode(GAME.view(state, seat))
        assert b"build_gold_only" not in encoded  # still in the deck, somewhere


def test_the_history_hides_other_seats_drawn_cards_and_every_shuffle_order():
    drawn = c.CardDrawn(seat=1, card="exchange")
    assert GAME.redact(drawn, 1) == drawn
    assert GAME.redact(drawn, 0) == c.CardDrawn(seat=1, card=None)
    assert GAME.redact(drawn, None) == c.CardDrawn(seat=1, card=None)
    shuffled = opening(3)[0]
    for seat in (None, 0, 1, 2):
        assert GAME.redact(shuffled, seat) == c.DeckShuffled(order=(), size=18)
    rolled = roll(0, 1, 2, 3)
    assert GAME.redact(rolled, 2) is rolled


def test_the_view_shows_the_public_board():
    spec = Spec(GAME, 3).given(opening(3) + [roll(0, 1, 1, 2, 2, 3, 4, 5, 6, 6)])
    view = GAME.view(spec.state, 2)
    assert view.phase == "action" and view.awaiting == (0,) and view.turn_seat == 0
    assert view.tower[0] == c.FloorView(floor="camels", value=1, white=2, yellow=0)
    assert view.supervisor == "C" and view.caravan_capacity == 9 and view.caravan_width == 3
    assert view.players[0].gold == 2 and view.players[0].reserve == 24


def test_the_game_satisfies_the_kernel_protocol():
    game: Game = GAME
    assert (game.name, game.title, game.min_seats, game.max_seats) == ("yspahan", "Yspahan", 2, 4)
    assert game.options_type is c.Options and game.command_types == c.COMMANDS and game.event_types == c.EVENTS


def test_every_contract_has_an_explicit_yspahan_tag():
    tags = [t.__struct_config__.tag for t in c.COMMANDS + c.EVENTS]
    assert len(set(tags)) == len(tags)
    for t in c.COMMANDS + c.EVENTS:
        assert t.__struct_config__.tag == f"yspahan.{t.__name__}" and t.__struct_config__.frozen
    for t in c.COMMANDS:
        assert issubclass(t, c.Command) and t.__struct_config__.forbid_unknown_fields
    for t in c.EVENTS:
        assert issubclass(t, c.Event)


def test_commands_and_events_round_trip_through_the_tagged_unions():
    commands = msgspec.json.Decoder(Union[TABLE_COMMANDS + c.COMMANDS])  # type: ignore[valid-type]
    events = msgspec.json.Decoder(Union[TABLE_EVENTS + c.EVENTS])  # type: ignore[valid-type]
    seen = set()
    for _, _, command, produced in random_game(4, 5):
        assert commands.decode(msgspec.json.encode(command)) == command
        for event in produced:
            assert events.decode(msgspec.json.encode(event)) == event
            seen.add(type(event))
    assert len(seen) >= 15


def test_commands_are_strict_at_the_door():
    decoder = msgspec.json.Decoder(Union[c.COMMANDS])  # type: ignore[valid-type]
    with pytest.raises(msgspec.ValidationError):
        decoder.decode(b'{"type": "yspahan.RollDice", "yellow": 1, "cheat": true}')
    with pytest.raises(msgspec.ValidationError):
        decoder.decode(b'{"type": "yspahan.SelectDice", "floor": "roof", "action": "card"}')
    assert decoder.decode(b'{"type": "yspahan.EndTurn"}') == c.EndTurn()


def test_old_events_without_newer_fields_still_decode():
    decoder = msgspec.json.Decoder(Union[c.EVENTS])  # type: ignore[valid-type]
    old = b'{"type": "yspahan.DiceSelected", "seat": 1, "floor": "gold", "action": "floor"}'
    assert decoder.decode(old) == c.DiceSelected(seat=1, floor="gold", action="floor")
    unknown = b'{"type": "yspahan.TurnEnded", "seat": 2, "added_later": 5}'
    assert decoder.decode(unknown) == c.TurnEnded(seat=2)


def test_options_have_defaults_and_bad_options_are_refused_at_creation():
    assert c.Options() == c.Options(caravan_width_2p=4, cubes_per_player=24, gold_in_box=25, camels_in_box=25)
    with pytest.raises(RuleViolation) as exc:
        tbl.decide(
            tbl.EMPTY,
            None,
            None,
            CreateGame(game="yspahan", title="t", seats=2, options={"caravan_width_2p": 5}),
            Chance(b"s", 0),
        )
    assert exc.value.code == "bad_options"
    with pytest.raises(RuleViolation) as exc:
        tbl.decide(
            tbl.EMPTY,
            None,
            None,
            CreateGame(game="yspahan", title="t", seats=3, options={"colour": "red"}),
            Chance(b"s", 0),
        )
    assert exc.value.code == "bad_options"


def test_options_change_the_caravan_with_two_players():
    table, _ = start_table(GAME, 2, {"caravan_width_2p": 3})
    assert GAME.view(table.state, 0).caravan_capacity == 9
