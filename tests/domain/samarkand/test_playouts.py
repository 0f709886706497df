"""Seeded random games through the table (tests.domain.harness.playout): 90 games over 3, 4 and 5 players by
default (SOUK_PLAYOUTS scales them), half of them with the hidden-goods variant. After every event: money and cards are conserved, and no view shows
a seat (or a spectator) another seat's secrets; at the end the history's redactions hide them too.
"""

from __future__ import annotations

import os
from collections import Counter

import msgspec
import pytest

from contracts.samarkand import (
    Answered,
    BankDeckShuffled,
    CamelBought,
    CamelDeckShuffled,
    CamelDisputed,
    CardChosen,
    GameScored,
    Goods,
    GoodsBought,
    GoodsDisputed,
    MarketSetUp,
    RoundEnded,
    StopFined,
    ValueClosed,
)
from contracts.table import GameEnded
from domain import table as tbl
from domain.samarkand import GAME, data, rules
from tests.domain.harness import playout
from tests.domain.samarkand.support import ensure_registered, named

# SOUK_PLAYOUTS (README, Tests) scales every random-playout test: 8 games a case by default, CI's short form (48 in
# all, each checked after every event; 150 took 63 s of CI's time, 90 took 43 s), 50 with SOUK_PLAYOUTS=1400
GAMES_PER_CASE = max(1, int(os.environ.get("SOUK_PLAYOUTS", "224")) // 28)
SETTLEMENTS = (ValueClosed, GoodsBought, CamelBought, StopFined, GoodsDisputed, CamelDisputed)
encode = msgspec.json.encode
replace = msgspec.structs.replace


@pytest.fixture(autouse=True)
def _registered():
    ensure_registered()


def check_conservation(state: rules.State) -> None:
    assert all(p.money >= 0 for p in state.players)
    assert sum(p.money for p in state.players) + state.bank_in == state.issued
    cards: dict[str, list[int]] = {k: [] for k in data.GOODS}
    for p in state.players:
        cards[p.sells].extend(p.hand)
        if p.offer is not None:
            cards[p.sells].append(p.offer)
        for g in p.goods + p.discarded:
            cards[g.kind].append(g.value)
    for g in state.discard:
        cards[g.kind].append(g.value)
    if state.bank_goods is not None:
        cards[state.bank_goods].extend(state.bank_pile)
        if state.bank_offer is not None:
            cards[state.bank_goods].append(state.bank_offer)
    in_play = set(rules.kinds_in_play(state))
    for kind, values in cards.items():
        assert sorted(values) == (sorted(data.GOODS_VALUES) if kind in in_play else []), kind
    camels = list(state.camel_pile) + [c for p in state.players for c in p.camels]
    if state.camel_up is not None:
        camels.append(state.camel_up)
    assert sorted(camels) == sorted(data.CAMELS)


def others_secrets_changed(state: rules.State, viewer: int | None) -> rules.State:
    """The same state where every seat but ``viewer`` has other secrets (and the piles another order)."""
    lifted = state.phase in (rules.SCORING, rules.OVER)
    players = []
    for i, p in enumerate(state.players):
        if i != viewer:
            p = replace(
                p,
                hand=tuple(v + 10 for v in p.hand),
                chosen=None if p.chosen is None else p.chosen + 100,
                stop=None if p.stop is None else (99 if p.stop != 99 else "camel"),
            )
            if not lifted:
                p = replace(p, money=p.money + 1000, camels=p.camels + (9,))
                if state.options.hidden_goods:
                    p = replace(p, goods=p.goods + (Goods("secret", 9),))
        players.append(p)
    return replace(
        state, players=tuple(players), camel_pile=state.camel_pile[::-1], bank_pile=state.bank_pile[::-1]
    )


def check_views(state: rules.State) -> None:
    lifted = state.phase in (rules.SCORING, rules.OVER)
    for viewer in [*range(state.seats), None]:
        seen = GAME.view(state, viewer)
        assert (seen.you is None) if viewer is None else (seen.you.seat == viewer)
        for pv in seen.players:
            if pv.seat != viewer and not lifted:
                assert pv.money is None and pv.camels is None
                if state.options.hidden_goods:
                    assert pv.goods is None
        assert encode(seen) == encode(GAME.view(others_secrets_changed(state, viewer), viewer))


def check(table: tbl.Table) -> None:
    state = table.state
    if state is None or not state.players:
        return
    check_conservation(state)
    check_views(state)


def check_history(events: list, final: rules.State) -> None:
    """Every money flow of the history adds up to the final money; redactions hide every secret."""
    money: Counter = Counter()
    bank = 0
    game_events = [e for e in events if type(e) in GAME.event_types]
    for e in game_events:
        if isinstance(e, MarketSetUp):
            for s in range(len(e.goods)):
                money[s] += e.money
        elif isinstance(e, GoodsBought):
            money[e.buyer] -= e.price
            if e.seller is None:
                bank += e.price
            else:
                money[e.seller] += e.price
        elif isinstance(e, CamelBought):
            money[e.buyer] -= e.price
            bank += e.price
        elif isinstance(e, StopFined):
            money[e.seat] -= e.amount
            bank += e.amount
        elif isinstance(e, (GoodsDisputed, CamelDisputed)):
            for s in e.seats:
                money[s] -= e.payment
            if isinstance(e, GoodsDisputed) and e.seller is not None:
                money[e.seller] += e.payment * len(e.seats)
            else:
                bank += e.payment * len(e.seats)
    assert [money[s] for s in range(final.seats)] == [p.money for p in final.players]
    assert bank == final.bank_in
    for e in game_events:
        if isinstance(e, SETTLEMENTS):
            assert e.hidden_goods == final.options.hidden_goods, e
        for viewer in [*range(final.seats), None]:
            shown = GAME.redact(e, viewer)
            assert type(shown) is type(e)
            if isinstance(e, CardChosen) and viewer != e.seat:
                assert shown.value is None
            elif isinstance(e, Answered) and viewer != e.seat:
                assert shown.stop is None and shown.target is None
            elif isinstance(e, (CamelDeckShuffled, BankDeckShuffled)):
                assert shown.order is None and shown.size == e.size
            elif isinstance(e, SETTLEMENTS) and e.hidden_goods:  # each seat named to itself only
                assert set(named(shown)) == set(named(e)) & {viewer}, (viewer, e, shown)
                kept = [f for f in e.__struct_fields__ if f not in ("seat", "seats", "buyer", "disputants", "stops",
                                                                     "target", "amount")]
                assert [getattr(shown, f) for f in kept] == [getattr(e, f) for f in kept]
                if isinstance(e, StopFined) and viewer == e.seat:
                    assert shown is e  # the fined seat sees whole what it stopped on and paid
            else:
                assert shown == e


@pytest.mark.parametrize("hidden_goods", [False, True], ids=["open-goods", "hidden-goods"])
@pytest.mark.parametrize("seats", [3, 4, 5])
def test_random_games_conserve_money_and_cards_and_leak_no_secret(seats, hidden_goods):
    for seed in range(GAMES_PER_CASE):
        options = {"hidden_goods": True} if hidden_goods else None
        table, events = playout(GAME, seats, seed * 10 + seats, options=options, check=check)
        state = table.state
        assert state.phase == rules.OVER
        assert sum(isinstance(e, RoundEnded) for e in events) == data.ROUNDS
        scored = [e for e in events if isinstance(e, GameScored)]
        ended = [e for e in events if isinstance(e, GameEnded)]
        assert len(scored) == len(ended) == 1 and ended[0].scores == scored[0].scores
        assert ended[0].details["seats"][0]["total"] == scored[0].details[0].total
        check_history(events, state)
