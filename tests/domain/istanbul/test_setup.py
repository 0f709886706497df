"""Setup by player count, through the game's own ``setup`` with chance written into its events."""

from __future__ import annotations

import pytest

from contracts.istanbul import ChooseFountain, FountainRevealed, LocationDealt, LocationRevealed
from domain.chance import Chance
from domain.istanbul import GAME, data, rules


def set_up(seats: int, seed: int) -> tuple[rules.State, list]:
    events = GAME.setup(seats, GAME.options_type(), Chance(seed.to_bytes(8, "big"), 0))
    return rules.fold(GAME.initial_state(seats, GAME.options_type()), events), events


@pytest.mark.parametrize("seats", [1, 2, 3, 4, 5])
def test_setup_deals_a_card_each_two_face_up_a_caravan_card_and_ruby_cards_by_player_count(seats):
    state, events = set_up(seats, 1)
    assert state.stage == rules.TURN and state.active == state.first and state.round == 1
    assert [p.first for p in state.players] == [i == state.first for i in range(seats)]
    assert all(len(p.hand) == 1 for p in state.players) and len(state.display) == 2
    assert all(data.LOCATION_CARDS[c].fountain is None for c in state.display + sum((p.hand for p in state.players), ()))
    assert state.caravan is not None and len(state.caravan_deck) == 7
    assert all(len(cards) == data.RUBY_CARDS_PER_LETTER[seats] for cards in state.palace)
    assert state.side == ("1-3" if seats <= 3 else "4-5")
    dealt = [e for e in events if isinstance(e, LocationDealt)]
    assert [e.seat for e in dealt] == list(range(seats))
    assert all(GAME.redact(e, (e.seat + 1) % seats if seats > 1 else None).card is None for e in dealt)


def test_the_first_player_is_drawn_by_chance():
    firsts = {set_up(4, seed)[0].first for seed in range(40)} - {None}  # None: a fountain's choice awaited
    assert firsts == {0, 1, 2, 3}


def test_a_fountain_turned_at_setup_is_resolved_for_everyone_and_replaced():
    state, events = set_up(3, 4)  # seed 4: the lira fountain comes up
    [fountain] = [e for e in events if isinstance(e, FountainRevealed)]
    assert fountain.reward == "lira" and fountain.card in state.location_discard
    assert all(p.lira == 1 for p in state.players)
    assert len(state.display) == 2 and all(len(p.hand) == 1 for p in state.players)


def test_a_fountain_with_a_choice_at_setup_waits_for_every_seat_then_the_setup_goes_on():
    state, events = set_up(3, 5)  # seed 5: the good fountain comes up
    assert GAME.flow(state).phase == "fountain" and GAME.flow(state).awaiting == (0, 1, 2)
    assert state.first is None
    position = 1
    for seat in range(3):
        for event in GAME.decide(state, seat, ChooseFountain(good="fruit"), Chance(b"x", position)):
            state = GAME.evolve(state, event)
        position += 1
    assert all(p.goods == (0, 0, 1, 0) for p in state.players)
    while GAME.flow(state).phase == "fountain":  # this seed turns up another fountain while dealing
        seat = GAME.flow(state).awaiting[0]
        for event in GAME.decide(state, seat, GAME.legal_commands(state, seat)[0], Chance(b"x", position)):
            state = GAME.evolve(state, event)
        position += 1
    assert state.stage == rules.TURN and state.first is not None
    assert len(state.display) == 2 and all(len(p.hand) == 1 for p in state.players)
    assert not any(isinstance(e, LocationRevealed) and e.card in state.location_discard for e in events)


def test_istanbul_is_a_game_of_the_platform():
    from domain import kernel

    assert kernel.games()["istanbul"] is GAME
    assert (GAME.min_seats, GAME.max_seats) == (1, 5)
