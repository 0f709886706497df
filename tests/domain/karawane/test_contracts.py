"""Contracts (tags, strictness, schema) and the game object's metadata; legal commands are exactly what decide
accepts (a sample of states of a seeded game: every legal command accepted, a few near-misses refused)."""

from __future__ import annotations

from typing import Union

import msgspec
import pytest

from contracts import karawane as c
from contracts.base import Command, Event, View
from domain.chance import Chance
from domain.karawane import GAME
from domain.kernel import RuleViolation
from tests.domain.karawane.support import random_game

event_decoder = msgspec.json.Decoder(Union[c.EVENTS])  # type: ignore[valid-type]
command_decoder = msgspec.json.Decoder(Union[c.COMMANDS])  # type: ignore[valid-type]


def test_every_contract_has_an_explicit_karawane_tag_and_the_right_base():
    for kinds, base in ((c.COMMANDS, Command), (c.EVENTS, Event), (c.VIEWS, View)):
        for kind in kinds:
            assert issubclass(kind, base) and kind.__struct_config__.frozen
            assert kind.__struct_config__.tag == f"karawane.{kind.__name__}"
    assert GAME.command_types == c.COMMANDS and GAME.event_types == c.EVENTS and GAME.view_types == c.VIEWS
    assert (GAME.name, GAME.min_seats, GAME.max_seats) == ("karawane", 2, 5)
    msgspec.json.schema_components([*c.COMMANDS, *c.EVENTS, *c.VIEWS])


def test_commands_are_strict_at_the_door_and_events_evolvable():
    assert command_decoder.decode(b'{"type":"karawane.Step","to":6}') == c.Step(to=6)
    with pytest.raises(msgspec.ValidationError):
        command_decoder.decode(b'{"type":"karawane.Step","to":6,"extra":1}')
    with pytest.raises(msgspec.ValidationError):
        command_decoder.decode(b'{"type":"karawane.Supply","water":"rain"}')
    newer = b'{"type":"karawane.TurnStarted","seat":1,"round":3,"clock":12}'
    assert event_decoder.decode(newer) == c.TurnStarted(seat=1, round=3)


def test_legal_commands_are_accepted_and_stay_short():
    longest = 0
    for n, (state, seat, command, events) in enumerate(random_game(4, 9, max_rounds=15)):
        legal = GAME.legal_commands(state, seat)
        longest = max(longest, len(legal))
        if n % 10 == 0:
            for other in legal:
                GAME.decide(state, seat, other, Chance(b"k", n))  # raises if refused
        for wrong in (c.Step(to=99), c.SwapWith(hex=7), c.Trade(goods=9)):
            if wrong not in legal:
                with pytest.raises(RuleViolation):
                    GAME.decide(state, seat, wrong, Chance(b"k", n))
    assert longest <= 120
