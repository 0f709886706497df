"""Contracts (tags, strictness, schema evolution) and what each seat sees."""

from __future__ import annotations

from typing import Union

import msgspec
import pytest

from contracts import samarkand as c
from contracts.base import Command, Event, View
from domain.samarkand import GAME, rules
from tests.domain.samarkand.support import goods, market, reveal, scoring_state, spec, with_players

event_decoder = msgspec.json.Decoder(Union[c.EVENTS])  # type: ignore[valid-type]
command_decoder = msgspec.json.Decoder(Union[c.COMMANDS])  # type: ignore[valid-type]


def test_every_contract_has_an_explicit_samarkand_tag_and_the_right_base():
    for kinds, base in ((c.COMMANDS, Command), (c.EVENTS, Event), (c.VIEWS, View)):
        for kind in kinds:
            assert issubclass(kind, base) and kind.__struct_config__.frozen
            assert kind.__struct_config__.tag == f"samarkand.{kind.__name__}"
    assert all(k.__name__.endswith("View") for k in c.VIEWS)
    assert GAME.command_types == c.COMMANDS and GAME.event_types == c.EVENTS


def test_an_event_written_today_decodes_into_the_current_type():
    # Bytes as this version writes them; a later version must still read them (new fields get defaults).
    written = (
        b'{"type":"samarkand.GoodsBought","buyer":1,"seller":null,"kind":"jewels","value":7,"price":10,'
        b'"disputants":[],"hidden_goods":false}',
        b'{"type":"samarkand.CardsRevealed","values":[7,5,3,1],"start":10}',
        b'{"type":"samarkand.Answered","seat":2,"value":7,"stop":true,"target":"camel"}',
        b'{"type":"samarkand.ValueClosed","value":7,"stops":[{"seat":2,"target":"camel"},{"seat":0,"target":3}],'
        b'"hidden_goods":true}',
        b'{"type":"samarkand.GameScored","scores":[14],"winners":[0],"details":[{"money":8,"wealth":3,'
        b'"least_bought_kind":"jewels","least_bought":12,"series":3,"capacity":9,"goods_kept":7,'
        b'"capacity_penalty":-4,"discarded":[],"total":14}]}',
    )
    decoded = [event_decoder.decode(b) for b in written]
    assert decoded[0] == c.GoodsBought(buyer=1, seller=None, kind="jewels", value=7, price=10)
    assert decoded[1] == c.CardsRevealed(values=(7, 5, 3, 1))
    assert decoded[2] == c.Answered(seat=2, value=7, stop=True, target="camel")
    assert decoded[3].stops == (c.StopCall(2, "camel"), c.StopCall(0, 3)) and decoded[3].hidden_goods
    assert decoded[4].details[0].least_bought == 12
    assert [msgspec.json.encode(e) for e in decoded] == list(written)


def test_an_older_event_without_the_defaulted_fields_and_a_newer_one_with_unknown_fields_both_decode():
    old = b'{"type":"samarkand.GoodsBought","buyer":1,"seller":0,"kind":"spices","value":5,"price":4}'
    newer = b'{"type":"samarkand.RoundEnded","round":3,"discarded":[],"reason":"zero"}'
    assert event_decoder.decode(old).disputants == () and event_decoder.decode(old).hidden_goods is False
    before_the_flag = b'{"type":"samarkand.StopFined","seat":2,"target":"camel","price":4,"amount":1}'
    assert event_decoder.decode(before_the_flag) == c.StopFined(seat=2, target="camel", price=4, amount=1)
    assert event_decoder.decode(newer) == c.RoundEnded(round=3)


def test_commands_are_strict_at_the_door():
    assert command_decoder.decode(b'{"type":"samarkand.Stop","target":"bank"}') == c.Stop(target="bank")
    with pytest.raises(msgspec.ValidationError):
        command_decoder.decode(b'{"type":"samarkand.Stop","target":2,"price":3}')
    with pytest.raises(msgspec.ValidationError):
        command_decoder.decode(b'{"type":"samarkand.Stop","target":"market"}')


def test_the_state_and_views_encode_to_json():
    s = spec(4, market(4) + reveal((7, 5, 3, 1)))
    msgspec.json.encode(s.state)
    for viewer in (0, None):
        decoded = msgspec.json.decode(msgspec.json.encode(GAME.view(s.state, viewer)), type=c.SamarkandView)
        assert decoded == GAME.view(s.state, viewer)


def test_a_seat_sees_its_hand_money_and_camels_and_only_the_hand_size_of_the_others():
    s = spec(4, market(4))
    s.state = with_players(s.state, s1={"camels": (4,)})
    mine, theirs, spectator = GAME.view(s.state, 1), GAME.view(s.state, 0), GAME.view(s.state, None)
    assert mine.you.hand == (1, 1, 1, 2, 2, 3, 3, 4, 5, 7)
    assert (mine.players[1].money, mine.players[1].camels) == (15, (4,))
    assert (theirs.players[1].money, theirs.players[1].camels, theirs.players[1].hand_count) == (None, None, 10)
    assert spectator.you is None and all(p.money is None and p.camels is None for p in spectator.players)
    assert theirs.camel_up == 3 and theirs.camel_pile == 15


def test_bought_goods_are_public_unless_the_hidden_goods_variant_is_played():
    given = market(4) + reveal((7, 5, 3, 1)) + [c.GoodsBought(buyer=1, seller=0, kind="carpets", value=7, price=10)]
    open_ = spec(4, given)
    hidden = spec(4, given, hidden_goods=True)
    assert GAME.view(open_.state, 2).players[1].goods == goods(("carpets", 7))
    assert GAME.view(open_.state, None).players[1].goods == goods(("carpets", 7))
    assert GAME.view(hidden.state, 2).players[1].goods is None
    assert GAME.view(hidden.state, None).players[1].goods is None
    assert GAME.view(hidden.state, 1).players[1].goods == goods(("carpets", 7))


def test_the_camel_and_bank_piles_are_secret_to_everyone_in_the_history():
    shuffled = c.CamelDeckShuffled(order=(2, 3), size=2)
    for viewer in (0, 3, None):
        assert GAME.redact(shuffled, viewer) == c.CamelDeckShuffled(order=None, size=2)
        assert GAME.redact(c.BankDeckShuffled(order=(7,), size=1), viewer).order is None
    bought = c.CamelBought(buyer=1, capacity=3, price=4)
    assert GAME.redact(bought, 2) is bought  # a purchase happens in the open


def test_at_scoring_the_screens_are_lifted_and_the_scores_are_public():
    state = scoring_state(4, [{"money": 10, "camels": (5,), "goods": goods(("spices", 2), ("spices", 1),
                                                                          ("fruits", 3), ("fruits", 1),
                                                                          ("jewels", 1))}])
    state = rules.fold(state, rules._maybe_score(state))
    seen = GAME.view(state, None)
    assert seen.phase == "over" and seen.players[0].money == 10 and seen.players[0].camels == (5,)
    assert seen.scores == state.scores and seen.details[0].total == state.scores[0]


def test_the_flow_names_the_phase_the_round_and_the_dean():
    state = spec(4, market(4, dean=2) + reveal((7, 5, 3, 1))).state
    flow = GAME.flow(state)
    assert (flow.phase, flow.round, flow.turn_seat, flow.awaiting) == ("countdown", 1, 2, (0, 1, 2, 3))
    assert GAME.flow(GAME.initial_state(4, c.Options())).awaiting == ()
