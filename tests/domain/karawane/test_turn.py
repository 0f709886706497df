"""A turn's first part: the thief card of the round, equipping at home, moving hex by hex and looking at the
face-down hexes entered, and the one token a turn (genie or map), before or after the move."""

from __future__ import annotations

import msgspec

from contracts.karawane import (
    CaravanStepped,
    EndTurn,
    Equip,
    Equipped,
    GenieSummoned,
    HexesSwapped,
    HexLooked,
    HexRevealed,
    MoveEnded,
    PlayGenie,
    PlayMap,
    Step,
    StopMoving,
    SwapWith,
    ThiefTurned,
    TurnEnded,
    TurnStarted,
)
from domain.chance import Chance
from domain.karawane import GAME, data, rules
from tests.domain.karawane.support import at, cell, play, spec, with_hand

replace = msgspec.structs.replace
EDGE = cell(4, 0)  # the known sector's west edge, next to the red city at (3, 0)
RED_CITY, RED_OASIS, TOWER = cell(3, 0), cell(3, 1), cell(2, 0)


# --- equip ----------------------------------------------------------------------------------------------

def test_a_caravan_at_home_takes_up_to_six_equipment_cards_at_the_start_of_its_turn():
    s = spec()
    state = s.when(0, Equip(camel_drivers=2, water_skins=3, goods=1)).then(
        [Equipped(seat=0, cards=6, camel_drivers=2, water_skins=3, goods=1)])
    assert state.players[0].hand == rules.Hand(camel_drivers=2, water_skins=3, goods=1)
    assert state.supply.camel_drivers == 13 and state.supply.water_skins == 17 and state.stage == rules.MOVE


def test_the_hand_never_holds_more_than_six_cards():
    s = spec()
    s.when(0, Equip(camel_drivers=3, water_skins=3, goods=1)).then_error("hand_full")
    s.state = with_hand(s.state, 0, goods=4)  # it stayed at home with cards in hand
    s.when(0, Equip(water_skins=3)).then_error("hand_full")
    assert max(c.water_skins for c in GAME.legal_commands(s.state, 0)) == 2


def test_equipment_comes_from_a_finite_supply():
    s = spec()
    s.state = replace(s.state, supply=replace(s.state.supply, camel_drivers=1))
    s.when(0, Equip(camel_drivers=2)).then_error("supply_empty")
    assert max(c.camel_drivers for c in GAME.legal_commands(s.state, 0)) == 1
    s.when(0, Equip(goods=-1)).then_error("bad_count")


def test_a_caravan_away_from_home_does_not_equip():
    s = at(spec(), 0, EDGE)
    assert s.state.stage == rules.MOVE and not any(isinstance(c, Equip) for c in GAME.legal_commands(s.state, 0))
    s.when(0, Equip(goods=1)).then_error("wrong_phase")


def test_only_the_active_seat_decides():
    s = spec()
    s.when(1, Equip()).then_error("not_your_turn")
    assert GAME.legal_commands(s.state, 1) == [] and GAME.flow(s.state).awaiting == (0,)


def test_the_others_see_how_many_cards_were_taken_not_which():
    event = Equipped(seat=0, cards=6, camel_drivers=2, water_skins=3, goods=1)
    assert GAME.redact(event, 0) is event
    assert GAME.redact(event, 1) == Equipped(seat=0, cards=6, camel_drivers=None, water_skins=None, goods=None)
    assert GAME.redact(event, None) == GAME.redact(event, 1)


# --- move -----------------------------------------------------------------------------------------------

def test_a_caravan_moves_up_to_three_hexes_one_neighbour_at_a_time():
    s = spec()
    play(s, 0, Equip())
    s.when(0, Step(to=cell(5, 0))).then_error("not_adjacent")
    play(s, 0, Step(to=cell(6, 0)), Step(to=cell(5, 0)))
    events = s.decide(0, Step(to=EDGE))
    assert events == [CaravanStepped(seat=0, to=EDGE), MoveEnded(seat=0, desert=False)]  # the third step ends it
    state = s.given(events).state
    assert state.stage == rules.AFTER and state.turn.path == (cell(6, 0), cell(5, 0), EDGE)
    assert not any(isinstance(c, Step) for c in GAME.legal_commands(state, 0))
    s.when(0, Step(to=RED_CITY)).then_error("wrong_phase")


def test_moving_back_and_forth_and_stopping_early_are_allowed():
    s = at(spec(), 0, EDGE)
    play(s, 0, Step(to=RED_CITY), Step(to=EDGE))
    state = s.when(0, StopMoving()).then([MoveEnded(seat=0, desert=True)])
    assert state.turn.crossed == (state.board[RED_CITY],) and state.stage == rules.DESERT


def test_each_face_down_hex_entered_is_looked_at_secretly_once():
    s = at(spec(), 0, EDGE)
    events = s.when(0, Step(to=RED_CITY)).then_starts_with([CaravanStepped(seat=0, to=RED_CITY)])
    [looked] = [e for e in s.decide(0, Step(to=RED_CITY)) if isinstance(e, HexLooked)]
    assert looked == HexLooked(seat=0, hex=RED_CITY, kind="city")
    assert GAME.redact(looked, 0) is looked
    assert GAME.redact(looked, 1).kind is None and GAME.redact(looked, None).kind is None
    assert GAME.is_barrier(looked)
    play(s, 0, Step(to=RED_CITY), Step(to=EDGE))
    s2 = at(s, 0, EDGE)
    assert s2.decide(0, Step(to=RED_CITY)) == [CaravanStepped(seat=0, to=RED_CITY)]  # seen already: nothing new
    assert events.players[0].seen == (s.state.board[RED_CITY],)


def test_a_step_in_the_known_sector_shows_nothing_and_can_be_undone():
    s = spec()
    play(s, 0, Equip())
    [stepped] = s.decide(0, Step(to=cell(6, 0)))
    assert not GAME.is_barrier(stepped)


# --- tokens ---------------------------------------------------------------------------------------------

def test_a_map_token_reveals_a_hex_for_good_to_everyone_and_is_gone():
    s = at(spec(), 0, EDGE)
    state = s.when(0, PlayMap(hex=TOWER)).then([HexRevealed(seat=0, hex=TOWER, kind="tower")])
    assert state.players[0].tokens == 3 and state.board[TOWER] in state.face_up
    for reader in (0, 1, None):
        hexes = {h.cell: h for h in GAME.view(state, reader).hexes}
        assert hexes[TOWER].face_up and hexes[TOWER].kind == "tower"
        assert hexes[RED_CITY].kind is None


def test_one_token_a_turn_before_or_after_the_move_not_both():
    s = at(spec(), 0, EDGE)
    play(s, 0, PlayMap(hex=TOWER), StopMoving())
    s.when(0, PlayMap(hex=RED_OASIS)).then_error("token_used")
    s = at(spec(), 0, EDGE)
    play(s, 0, StopMoving())
    s.when(0, PlayMap(hex=RED_OASIS)).then([HexRevealed(seat=0, hex=RED_OASIS, kind="oasis")])


def test_no_token_is_played_during_the_move():
    s = at(spec(), 0, EDGE)
    play(s, 0, Step(to=cell(5, 0)))
    s.when(0, PlayMap(hex=TOWER)).then_error("wrong_phase")
    assert not any(isinstance(c, (PlayMap, PlayGenie)) for c in GAME.legal_commands(s.state, 0))


def test_a_seat_without_tokens_plays_none():
    s = at(spec(), 0, EDGE)
    s.state = replace(s.state, players=(replace(s.state.players[0], tokens=0), *s.state.players[1:]))
    s.when(0, PlayMap(hex=TOWER)).then_error("no_token")
    assert not any(isinstance(c, (PlayMap, PlayGenie)) for c in GAME.legal_commands(s.state, 0))


def test_tokens_work_on_face_down_desert_hexes_only():
    s = at(spec(), 0, EDGE)
    s.when(0, PlayMap(hex=EDGE)).then_error("not_desert_hex")
    s.when(0, PlayGenie(hex=data.HOME)).then_error("not_desert_hex")
    play(s, 0, PlayMap(hex=TOWER), StopMoving(), EndTurn())
    s.when(1, PlayMap(hex=TOWER)).then_error("wrong_phase")  # seat 1 equips first (at home)
    play(s, 1, Equip())
    s.when(1, PlayMap(hex=TOWER)).then_error("face_up")
    s.when(1, PlayGenie(hex=TOWER)).then_error("face_up")
    play(s, 1, PlayGenie(hex=RED_CITY))
    s.when(1, SwapWith(hex=TOWER)).then_error("face_up")
    s.when(1, SwapWith(hex=RED_CITY)).then_error("same_hex")


def test_a_genie_swaps_two_hexes_unseen_caravans_travel_along_and_knowledge_follows_the_hex():
    s = at(spec(), 1, EDGE)
    play(s, 1, Step(to=RED_CITY), StopMoving())  # seat 1 looked at the city; its caravan stands on it
    far = cell(0, 7)  # the green city
    s.given([TurnStarted(seat=0, round=1)])
    play(s, 0, Equip())
    state = s.when(0, PlayGenie(hex=RED_CITY)).then([GenieSummoned(seat=0, hex=RED_CITY)])
    assert state.stage == rules.GENIE and state.players[0].tokens == 3
    assert all(isinstance(c, SwapWith) for c in GAME.legal_commands(state, 0))
    s.given(s.decide(0, PlayGenie(hex=RED_CITY)))
    state = s.when(0, SwapWith(hex=far)).then([HexesSwapped(seat=0, a=RED_CITY, b=far, carried=(1,))])
    assert state.players[1].cell == far and state.stage == rules.MOVE  # back to its turn, before its move
    one = {h.cell: h for h in GAME.view(state, 1).hexes}
    zero = {h.cell: h for h in GAME.view(state, 0).hexes}
    assert one[far].kind == "city" and one[far].back == "red" and one[far].sector == "green"
    assert one[RED_CITY].kind is None and one[RED_CITY].back == "green"
    assert zero[far].kind is None and zero[far].back == "red"  # the swap is public, the content is not
    assert not GAME.is_barrier(HexesSwapped(seat=0, a=RED_CITY, b=far))


# --- rounds and the thief card --------------------------------------------------------------------------

def end_quietly(s, seat):
    """Seat ``seat`` (at home) takes nothing, does not move and ends its turn."""
    return play(s, seat, Equip(), StopMoving(), EndTurn())


def test_the_first_player_turns_a_thief_card_each_round_valid_for_everyone():
    s = spec(seats=2, first=1, thieves=1)
    end_quietly(s, 1)
    events = end_quietly(s, 0)
    assert [type(e) for e in events[-3:]] == [TurnEnded, ThiefTurned, TurnStarted]
    assert events[-3:][0] == TurnEnded(seat=0) and events[-1] == TurnStarted(seat=1, round=2)
    assert s.state.round == 2 and s.state.thieves == events[-2].thieves
    assert GAME.is_barrier(events[-2])


def test_the_thief_deck_is_reshuffled_when_every_card_was_turned():
    s = spec(seats=2, first=0)
    s.state = replace(s.state, thief_left=())
    events = end_quietly(s, 0) + end_quietly(s, 1)
    [turned] = [e for e in events if isinstance(e, ThiefTurned)]
    assert turned.reshuffled and len(s.state.thief_left) == 5 and s.state.thieves == turned.thieves


def test_six_rounds_turn_the_six_thief_cards_then_the_deck_is_shuffled_again():
    state = replace(spec(seats=2).state, thief_left=data.THIEF_CARDS, active=1, stage=rules.ENDED)
    turned = []
    for position in range(7):
        event = rules._start_round(state, Chance(b"t", position))[0]
        turned.append(event)
        state = replace(rules.evolve(state, event), active=1, stage=rules.ENDED)
    assert sorted(e.thieves for e in turned[:6]) == sorted(data.THIEF_CARDS)
    assert [e.reshuffled for e in turned] == [False] * 6 + [True]
