"""Setup, player counts, options, and the secret simultaneous choice of the card to sell."""

from __future__ import annotations

import msgspec
import pytest

from contracts.samarkand import (
    CardChosen,
    CardsRevealed,
    ChooseCard,
    Options,
    Pass,
)
from contracts.table import CreateGame
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation
from domain.samarkand import GAME, data
from tests.domain.samarkand.support import ensure_registered, market, reveal, spec


@pytest.fixture(autouse=True)
def _registered():
    ensure_registered()


def create(seats: int, options: dict) -> list:
    return tbl.decide(tbl.EMPTY, None, None, CreateGame(game="samarkand", title="t", seats=seats, options=options),
                      Chance(b"s", 0))


@pytest.mark.parametrize("seats", [3, 4, 5])
def test_the_game_is_created_for_three_to_five_players(seats):
    assert create(seats, {})[0].seats == seats


@pytest.mark.parametrize("seats", [2, 6])
def test_fewer_than_three_or_more_than_five_players_are_refused(seats):
    with pytest.raises(RuleViolation) as exc:
        create(seats, {})
    assert exc.value.code == "bad_seat_count"


def test_the_real_time_countdown_is_accepted_and_refused_only_with_the_hidden_goods_variant():
    assert create(4, {"countdown_mode": "realtime"})  # tests/domain/samarkand/test_realtime.py plays it
    with pytest.raises(RuleViolation) as exc:
        create(4, {"countdown_mode": "realtime", "hidden_goods": True})
    assert exc.value.code == "option_unsupported"


def test_a_countdown_interval_out_of_range_is_refused():
    with pytest.raises(RuleViolation) as exc:
        create(4, {"countdown_interval_ms": 5})
    assert exc.value.code == "bad_options"


def test_an_unknown_option_is_refused_at_the_door():
    with pytest.raises(RuleViolation) as exc:
        create(4, {"hiden_goods": True})
    assert exc.value.code == "bad_options"


def test_the_hidden_goods_variant_is_an_option():
    created = create(4, {"hidden_goods": True})[0]
    assert msgspec.convert(created.options, Options).hidden_goods is True


@pytest.mark.parametrize("seats", [4, 5])
def test_setup_gives_each_seat_every_card_of_its_own_type_and_fifteen_dirhams(seats):
    state = spec(seats).given_setup().state
    assert len({p.sells for p in state.players}) == seats
    assert all(p.hand == tuple(sorted(data.GOODS_VALUES)) and p.money == 15 for p in state.players)
    assert state.bank_goods is None and state.bank_offer is None
    assert state.issued == 15 * seats and state.round == 1 and state.phase == "choosing"


def test_with_three_players_the_bank_sells_a_fourth_type_and_each_seat_gets_twenty_five_dirhams():
    state = spec(3).given_setup().state
    assert all(p.money == 25 for p in state.players)
    assert state.bank_goods is not None and state.bank_goods not in {p.sells for p in state.players}
    assert state.bank_offer is not None and len(state.bank_pile) == 9  # one card turned face up


def test_setup_shuffles_the_camels_and_turns_the_first_face_up():
    events = GAME.setup(4, Options(), Chance(b"x", 0))
    state = spec(4, events).state
    assert state.camel_up is not None and len(state.camel_pile) == len(data.CAMELS) - 1
    assert sorted(state.camel_pile + (state.camel_up,)) == sorted(data.CAMELS)


def test_every_seat_chooses_at_once_at_the_start_of_a_round():
    s = spec(4, market(4, dean=2))
    flow = GAME.flow(s.state)
    assert (flow.phase, flow.awaiting, flow.round, flow.turn_seat) == ("choosing", (0, 1, 2, 3), 1, 2)


def test_a_seat_puts_a_card_of_its_hand_face_down():
    s = spec(4, market(4))
    state = s.when(1, ChooseCard(value=7)).then([CardChosen(seat=1, value=7)])
    assert GAME.flow(state).awaiting == (0, 2, 3)


def test_a_value_not_in_the_hand_is_refused():
    spec(4, market(4)).when(1, ChooseCard(value=6)).then_error("not_your_card")


def test_choosing_twice_in_a_round_is_refused():
    spec(4, market(4) + [CardChosen(seat=1, value=7)]).when(1, ChooseCard(value=5)).then_error("already_chosen")


def test_the_cards_are_revealed_when_the_last_seat_has_chosen():
    given = market(4) + [CardChosen(seat=0, value=7), CardChosen(seat=1, value=5), CardChosen(seat=3, value=1)]
    state = spec(4, given).when(2, ChooseCard(value=3)).then(
        [CardChosen(seat=2, value=3), CardsRevealed(values=(7, 5, 3, 1), start=10)]
    )
    assert [p.offer for p in state.players] == [7, 5, 3, 1]
    assert all(len(p.hand) == 9 for p in state.players)
    flow = GAME.flow(state)
    assert (flow.phase, flow.awaiting) == ("countdown", (0, 1, 2, 3)) and state.value == 10


def test_a_chosen_card_is_hidden_from_the_others_until_the_reveal():
    state = spec(4, market(4) + [CardChosen(seat=1, value=7)]).state
    assert GAME.view(state, 1).you.chosen == 7
    for viewer in (0, 2, 3, None):
        seen = GAME.view(state, viewer)
        assert seen.players[1].has_chosen is True
        assert seen.you is None or seen.you.chosen is None
        assert GAME.redact(CardChosen(seat=1, value=7), viewer) == CardChosen(seat=1, value=None)
    assert GAME.redact(CardChosen(seat=1, value=7), 1) == CardChosen(seat=1, value=7)


def test_answering_the_countdown_while_cards_are_chosen_is_refused():
    spec(4, market(4)).when(0, Pass()).then_error("wrong_phase")


def test_choosing_during_the_countdown_is_refused():
    spec(4, market(4) + reveal((7, 5, 3, 1))).when(0, ChooseCard(value=7)).then_error("wrong_phase")


def test_a_seat_outside_the_table_is_refused():
    spec(4, market(4)).when(4, ChooseCard(value=7)).then_error("no_such_seat")


def test_a_command_of_another_game_is_refused():
    spec(4, market(4)).when(0, CreateGame(game="x", title="t", seats=3)).then_error("unknown_command")
