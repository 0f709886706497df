"""The hidden-goods variant and the history (docs/rules-decisions.md, Samarkand, "What is public").

Bought goods go behind the screen. The market stays public: which card left it, at what price, bought or
disputed. But no seat's history (``redact``) tells another seat or a spectator who stopped, who bought, who
was fined or who disputed at a value, so that nobody can recount another seat's goods before the end. A seat
sees its own part in full. Four players unless said: seat 0 sells carpets, 1 spices, 2 fruits, 3 jewels; the
dean is seat 0; revealed cards 7, 5, 3, 1; each seat has 15 dirhams.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from contracts.samarkand import (
    Answered,
    CamelBought,
    CamelDisputed,
    GoodsBought,
    GoodsDisputed,
    Pass,
    ScoringStarted,
    Stop,
    StopCall,
    StopFined,
    ValueClosed,
)
from domain.chance import Chance
from domain.samarkand import GAME, data, rules
from tests.domain.harness import playout
from tests.domain.samarkand.support import (
    ensure_registered,
    market,
    named,
    reveal,
    spec,
    with_players,
)

OPEN = market(4) + reveal((7, 5, 3, 1))
VIEWERS = (0, 1, 2, 3, None)


@pytest.fixture(autouse=True)
def _registered():
    ensure_registered()


def decided(given: list, seat: int, command: Any, money: dict | None = None, **options: Any) -> list:
    """The given answers, then the events of ``command``."""
    s = spec(4, OPEN + given, **options)
    if money:
        s.state = with_players(s.state, **{f"s{k}": {"money": v} for k, v in money.items()})
    return given + s.decide(seat, command)


def history(given: list, seat: int, command: Any, viewer: int | None, money: dict | None = None,
            **options: Any) -> list:
    """The given answers and the events of ``command``, as ``viewer`` receives them."""
    return [msgspec.json.encode(GAME.redact(e, viewer)) for e in decided(given, seat, command, money, **options)]


def stops(*answers: tuple[int, Any]) -> list:
    return [Answered(seat=s, value=10, stop=t is not None, target=t) for s, t in answers]


def test_in_the_hidden_goods_variant_others_cannot_tell_who_bought_the_card_and_who_the_camel():
    one = stops((0, None), (1, 0), (2, "camel"))  # seat 1 buys the carpet, seat 2 the camel
    two = stops((0, None), (1, "camel"), (2, 0))  # the other way round
    for viewer in (0, 3, None):  # the seller, a bystander, a spectator
        assert history(one, 3, Pass(), viewer, hidden_goods=True) == history(two, 3, Pass(), viewer,
                                                                              hidden_goods=True)
    assert history(one, 3, Pass(), 3) != history(two, 3, Pass(), 3)  # the open game names them


def test_in_the_hidden_goods_variant_a_seat_sees_its_own_stop_and_purchase_in_full():
    s = spec(4, OPEN + stops((0, None), (1, 0), (2, "camel")), hidden_goods=True)
    events = s.decide(3, Pass())
    closed, bought, camel = events[1:4]
    assert closed == ValueClosed(value=10, stops=(StopCall(1, 0), StopCall(2, "camel")), hidden_goods=True)
    assert bought == GoodsBought(buyer=1, seller=0, kind="carpets", value=7, price=10, hidden_goods=True)
    assert GAME.redact(bought, 1) is bought and GAME.redact(camel, 2) is camel
    assert GAME.redact(closed, 1) == ValueClosed(value=10, stops=(StopCall(1, 0),), hidden_goods=True)
    assert GAME.redact(bought, 2) == GoodsBought(buyer=None, seller=0, kind="carpets", value=7, price=10,
                                                 hidden_goods=True)
    assert GAME.redact(camel, None) == CamelBought(buyer=None, capacity=3, price=10, hidden_goods=True)
    assert GAME.redact(closed, None) == ValueClosed(value=10, hidden_goods=True)


def test_in_the_hidden_goods_variant_a_dispute_the_dean_wins_looks_like_his_plain_purchase_to_the_others():
    disputed = stops((0, 1), (2, 1), (3, None))  # the dean and seat 2 name the spices: the dean keeps them
    alone = stops((0, 1), (2, None), (3, None))
    for viewer in (1, 3, None):
        assert history(disputed, 1, Pass(), viewer, hidden_goods=True) == history(alone, 1, Pass(), viewer,
                                                                                   hidden_goods=True)


def test_in_the_hidden_goods_variant_fines_and_discarding_disputes_name_nobody_to_the_others():
    # Seat 1 cannot pay the carpets and is fined while seats 2 and 3 dispute the spices; or seat 2 is fined on
    # the carpets while seats 1 and 3 dispute. The market is the same: the spices discarded, the carpets stay.
    one = stops((0, None), (1, 0), (2, 1))
    two = stops((0, None), (1, 1), (2, 0))
    poor = {1: 5, 2: 5}
    for viewer in (0, 3, None):
        assert history(one, 3, Stop(target=1), viewer, poor, hidden_goods=True) == history(
            two, 3, Stop(target=1), viewer, poor, hidden_goods=True)
    events = decided(one, 3, Stop(target=1), poor, hidden_goods=True)
    fine = next(e for e in events if type(e) is StopFined)
    assert GAME.redact(fine, 1) is fine
    assert GAME.redact(fine, 0) == StopFined(seat=None, target=None, price=10, amount=None, hidden_goods=True)
    dispute = next(e for e in events if type(e) is GoodsDisputed)
    assert dispute.seats == (2, 3) and GAME.redact(dispute, 2).seats == (2,) and GAME.redact(dispute, 0).seats == ()


def test_in_the_hidden_goods_variant_the_fines_of_a_value_come_last_in_an_order_drawn_by_chance():
    """Seats 1 and 2 cannot pay half the carpets they dispute with seat 3. In seat order, seat 1 would learn that
    the other fined seat sits after it; so the fines follow the dispute, in an order the game's chance draws."""
    given = stops((0, None), (1, 0), (2, 0))
    s = spec(4, OPEN + given, hidden_goods=True)
    s.state = with_players(s.state, s1={"money": 2}, s2={"money": 2})
    orders = set()
    for position in range(1, 30):
        events = s.decide(3, Stop(target=0), position)
        assert [type(e) for e in events[2:]] == [GoodsDisputed, StopFined, StopFined]
        orders.add(tuple(e.seat for e in events[3:]))
    assert orders == {(1, 2), (2, 1)}
    open_game = spec(4, OPEN + given)
    open_game.state = with_players(open_game.state, s1={"money": 2}, s2={"money": 2})
    assert [type(e) for e in open_game.decide(3, Stop(target=0))[2:]] == [StopFined, StopFined, GoodsDisputed]


def test_the_open_game_names_every_buyer_to_everyone():
    events = spec(4, OPEN + stops((0, None), (1, 0), (2, "camel"))).decide(3, Pass())
    for event in events[1:]:
        assert all(GAME.redact(event, viewer) is event for viewer in VIEWERS)


# --- seeded games ---------------------------------------------------------------------------------------

SETTLED = (ValueClosed, GoodsBought, CamelBought, StopFined, GoodsDisputed, CamelDisputed)


def values_closed(events: list, options: Any, seats: int) -> Iterator[tuple[rules.State, list]]:
    """Each value of the countdown as it closed: the state with every answer in, and the events it settled."""
    game_events = [e for e in events if type(e) in GAME.event_types]
    state = rules.initial_state(seats, options)
    for i, event in enumerate(game_events):
        if type(event) is ScoringStarted:
            return
        if type(event) is ValueClosed:
            block = [event]
            for later in game_events[i + 1:]:
                if type(later) in (Answered, ValueClosed) or type(later).__name__.startswith("Round"):
                    break
                block.append(later)
            yield state, block
        state = rules.evolve(state, event)


def recount(seats: int, viewer: int | None, block: list) -> list[tuple[GoodsBought, set[int]]]:
    """For each goods card bought at this value by another seat: whom ``viewer``'s history leaves as its buyer.

    The market alone leaves every seat but the seller and the viewer (who knows what it did). The history
    narrows that down if it names the buyer, or names a seat as having done something else at this value (one
    answer per seat per value: that seat did not buy this card)."""
    shown = [GAME.redact(e, viewer) for e in block]
    others = {s for e in shown for s in named(e)} - {viewer}
    found = []
    for real, seen in zip(block, shown):
        if type(real) is GoodsBought and real.buyer != viewer:
            market = set(range(seats)) - {real.seller, viewer}
            found.append((real, {seen.buyer} if seen.buyer is not None else market - others))
    return found


def fines_apart(events: list) -> tuple[list, list]:
    """The events, with the fines apart as a multiset: the game draws their order by chance (the same draw in
    two worlds may put the viewer's own fine at another place; the order is uniform in both, so it tells
    nothing)."""
    fines = sorted((e for e in events if type(e) is StopFined), key=msgspec.json.encode)
    return [e for e in events if type(e) is not StopFined], fines


def seen_by(viewer: int | None, events: list) -> tuple[list, list]:
    return fines_apart([GAME.redact(e, viewer) for e in events])


def swaps(state: rules.State) -> Iterator[tuple[int, int]]:
    """Pairs of seats whose answers at this value could have been each other's with the same market outcome:
    both answered, neither is the dean, neither designated the other's card, and the same money class."""
    value, players = state.value, state.players
    half = data.dispute_payment(value)
    for x in range(state.seats):
        for y in range(x + 1, state.seats):
            px, py = players[x], players[y]
            if (px.answered and py.answered and state.dean not in (x, y) and px.stop != py.stop
                    and px.stop != y and py.stop != x
                    and (px.money >= value) == (py.money >= value) and (px.money >= half) == (py.money >= half)):
                yield x, y


def swapped(state: rules.State, x: int, y: int) -> rules.State:
    px, py = state.players[x], state.players[y]
    return with_players(state, **{f"s{x}": {"stop": py.stop}, f"s{y}": {"stop": px.stop}})


@pytest.mark.parametrize("seats", [3, 4, 5])
def test_in_hidden_goods_games_no_other_seat_nor_a_spectator_can_recount_a_seats_goods_from_the_history(seats):
    options = rules.Options(hidden_goods=True)
    checked = swaps_checked = 0
    for seed in range(12):
        _, events = playout(GAME, seats, 7000 + seed * 10 + seats, options={"hidden_goods": True})
        for state, block in values_closed(events, options, seats):
            # 1. Each purchase: the history narrows its buyer no further than the market does.
            for viewer in (*range(seats), None):
                for real, left in recount(seats, viewer, block):
                    market = set(range(seats)) - {real.seller, viewer}
                    assert left == market, (viewer, real, left)
                    assert len(left) >= 2 or (seats == 3 and viewer is not None)  # 3 players: see the docs
                    checked += 1
            # 2. Each value: two seats that could have swapped answers give every other reader the same history.
            real = rules._close_value(state, Chance(b"swap", 0))  # the same chance for both worlds
            assert fines_apart([e for e in real if type(e) in SETTLED]) == fines_apart(
                [e for e in block if type(e) in SETTLED])  # the value as it closed in the game
            for x, y in swaps(state):
                other = rules._close_value(swapped(state, x, y), Chance(b"swap", 0))
                for viewer in (*range(seats), None):
                    if viewer not in (x, y):
                        assert seen_by(viewer, real) == seen_by(viewer, other), (x, y, viewer)
                        swaps_checked += 1
    assert checked > 100 and swaps_checked > 100
