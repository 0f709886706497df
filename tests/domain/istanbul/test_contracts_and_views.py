"""Contracts (tags, strictness, schema) and what each seat sees; legal commands are exactly what decide accepts."""

from __future__ import annotations

import random
from typing import Union

import msgspec
import pytest

from contracts import istanbul as c
from contracts.base import Command, Event, View
from domain.istanbul import GAME, data
from domain.kernel import RuleViolation
from domain.chance import Chance
from tests.domain.istanbul.support import act, answer_all, at_act, random_game

event_decoder = msgspec.json.Decoder(Union[c.EVENTS])  # type: ignore[valid-type]
command_decoder = msgspec.json.Decoder(Union[c.COMMANDS])  # type: ignore[valid-type]
replace = msgspec.structs.replace


def test_every_contract_has_an_explicit_istanbul_tag_and_the_right_base():
    for kinds, base in ((c.COMMANDS, Command), (c.EVENTS, Event), (c.VIEWS, View)):
        for kind in kinds:
            assert issubclass(kind, base) and kind.__struct_config__.frozen
            assert kind.__struct_config__.tag == f"istanbul.{kind.__name__}"
    assert GAME.command_types == c.COMMANDS and GAME.event_types == c.EVENTS and GAME.view_types == c.VIEWS
    msgspec.json.schema_components([*c.COMMANDS, *c.EVENTS, *c.VIEWS])  # every type has a JSON Schema


def test_commands_are_strict_at_the_door():
    assert command_decoder.decode(b'{"type":"istanbul.Draw","source":"deck"}') == c.Draw(source="deck")
    with pytest.raises(msgspec.ValidationError):
        command_decoder.decode(b'{"type":"istanbul.Draw","source":"deck","extra":1}')
    with pytest.raises(msgspec.ValidationError):
        command_decoder.decode(b'{"type":"istanbul.PlayLocation","source":"middle"}')
    with pytest.raises(msgspec.ValidationError):
        command_decoder.decode(b'{"type":"istanbul.Act","via":"teleport"}')


def test_an_event_written_today_decodes_and_a_newer_one_with_unknown_fields_too():
    written = b'{"type":"istanbul.GuildDrawn","seat":2,"card":7,"to_keep":false}'
    assert event_decoder.decode(written) == c.GuildDrawn(seat=2, card=7)
    assert msgspec.json.encode(event_decoder.decode(written)) == written
    newer = b'{"type":"istanbul.TurnStarted","seat":1,"round":3,"clock":12}'
    assert event_decoder.decode(newer) == c.TurnStarted(seat=1, round=3)


def test_each_seat_sees_its_own_hand_and_only_the_count_of_the_others():
    s = at_act("4", seats=3)
    answer_all(s, {0: act("4")})
    views = GAME.views(s.state)
    assert list(views) == [0, 1, 2, None]
    assert views[0].you.goods_cards == s.state.players[0].cards and views[0].you.hand == s.state.players[0].hand
    assert views[1].you.goods_cards == () and views[1].players[0].goods_cards == 1
    assert views[None].you is None and views[None].players[0].hand == 0  # played from hand: not drawn yet
    encoded = msgspec.json.encode(views[1])
    assert s.state.players[0].cards[0].encode() not in encoded


def test_the_palace_view_shows_each_letters_price():
    s = at_act("8", seats=2)
    palace = GAME.view(s.state, None).palace
    assert [p.letter for p in palace] == list(data.LETTERS)
    assert all(len(p.price) == 5 and len(p.cards) == 2 for p in palace)  # 2 players: a card tucked under each


def variants(command):
    """Commands close to a legal one: other lists, another via, location, target or letter."""
    if not isinstance(command, c.Act):
        return []
    out = [
        replace(command, goods=command.goods + ("fabric",)),
        replace(command, goods=command.goods[::-1]),
        replace(command, goods=command.goods[1:]),
        replace(command, fill=command.fill + ("lira",)),
        replace(command, fill=()),
        replace(command, upgrades=command.upgrades + ("1",)),
        replace(command, upgrades=()),
        replace(command, cards=command.cards[1:]),
        replace(command, cards=command.cards + ("fabric/fruit",)),
        replace(command, discard=None if command.discard else "fabric/spice"),
        replace(command, letter=None if command.letter else "A"),
        replace(command, target="12" if command.target else "8"),
        replace(command, via={"free": "icon", "icon": "bonus", "bonus": "free"}[command.via]),
        replace(command, location="12" if command.location != "12" else "11"),
    ]
    return [v for v in out if v != command]


@pytest.mark.parametrize("seats,seed", [(1, 3), (2, 4), (3, 5), (5, 6)])
def test_decide_accepts_exactly_the_legal_commands_and_their_near_misses_only_when_legal(seats, seed):
    secret = seed.to_bytes(8, "big")
    rng = random.Random(seed)
    checked = 0
    for position, (state, seat, command, events) in enumerate(random_game(seats, seed), start=1):
        if rng.random() > 0.15:
            continue
        for s in GAME.flow(state).awaiting:
            legal = GAME.legal_commands(state, s)
            legal_bytes = {msgspec.json.encode(x) for x in legal}
            for x in legal:
                GAME.decide(state, s, x, Chance(secret, position))  # accepted
                for v in variants(x):
                    try:
                        GAME.decide(state, s, v, Chance(secret, position))
                        accepted = True
                    except RuleViolation:
                        accepted = False
                    assert accepted == (msgspec.json.encode(v) in legal_bytes), v
                    checked += 1
        for other in range(seats):
            if other not in GAME.flow(state).awaiting:
                assert GAME.legal_commands(state, other) == []
    assert checked > 100
