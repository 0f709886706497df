"""Seeded random games of Istanbul through the table (tests.domain.harness.playout), 1 to 5 players. After every
event: boxes only fill, then cross; every card is somewhere, once; no view shows a seat (or a spectator) another
seat's hand; at the end the history's redactions hide them too, and replaying gives the same state.

``SOUK_ISTANBUL_PLAYOUTS`` sets how many games per player count (default 6: 30 games, about 12 s with the checks;
``SOUK_ISTANBUL_PLAYOUTS=200`` plays 1,000 games).
"""

from __future__ import annotations

import os
from collections import Counter

import msgspec
import pytest

from contracts.table import GameEnded
from domain import table as tbl
from domain.istanbul import GAME, data, rules
from tests.domain.harness import playout
from tests.domain.istanbul.support import random_game, ruby_seeker

GAMES_PER_COUNT = int(os.environ.get("SOUK_ISTANBUL_PLAYOUTS", "6"))
replace = msgspec.structs.replace
encode = msgspec.json.encode


class Monotonic:
    """Boxes only fill, then cross: every count is at least its previous value and crossed <= filled."""

    def __init__(self) -> None:
        self.previous: rules.State | None = None

    def __call__(self, state: rules.State) -> None:
        for i, p in enumerate(state.players):
            assert 0 <= p.lira_x <= p.lira <= sum(data.LIRA_SECTIONS)
            assert 0 <= p.bonus_x <= p.bonus <= p.bonus_boxes
            assert all(0 <= x <= f <= data.GOODS_ROW for f, x in zip(p.goods, p.goods_x))
            assert all(0 <= u <= data.UPGRADES_PER_LOCATION for u in p.upgrades)
            assert all(c <= data.ICONS[state.side][loc] for c, loc in zip(p.icons, data.LOCATIONS))
            if self.previous is not None and self.previous.players:
                q = self.previous.players[i]
                for now, before in (
                    (p.lira, q.lira), (p.lira_x, q.lira_x), (p.bonus, q.bonus), (p.bonus_x, q.bonus_x),
                    (p.rubies, q.rubies), *zip(p.goods, q.goods), *zip(p.goods_x, q.goods_x),
                    *zip(p.upgrades, q.upgrades), *zip(p.icons, q.icons),
                ):  # fmt: skip
                    assert now >= before
        self.previous = state


def check_conservation(state: rules.State) -> None:
    if not state.players:
        return
    locations = list(state.location_deck) + list(state.location_discard) + list(state.display)
    locations += [c for p in state.players for c in p.hand]
    if state.location_deck or state.location_discard or state.display:
        assert sorted(locations) == list(range(len(data.LOCATION_CARDS)))
    guild = list(state.guild_deck) + list(state.guild_discard) + [c for p in state.players for c in p.guild + p.keep]
    if guild:
        assert sorted(guild) == sorted(g.id for g in data.GUILD_CARDS)
    goods = list(state.goods_deck) + list(state.goods_discard) + [c for p in state.players for c in p.cards]
    if goods:
        assert Counter(goods) == Counter(data.GOODS_CARDS)
    caravans = list(state.caravan_deck) + ([state.caravan] if state.caravan is not None else [])
    if caravans:
        assert sorted(caravans) == sorted(data.CARAVAN_CARDS)
    rubies = list(state.ruby_deck) + [c for cards in state.palace for c in cards]
    if rubies:
        assert sorted(rubies) == list(range(len(data.RUBY_CARDS)))


def others_hands_changed(state: rules.State, viewer: int | None) -> rules.State:
    """The same state where every other seat holds other cards and has answered otherwise (decks reordered)."""
    players = tuple(
        p if i == viewer else replace(p, hand=tuple(c + 100 for c in p.hand), guild=tuple(g + 50 for g in p.guild),
                                      cards=tuple("x/" + c for c in p.cards), keep=tuple(k + 50 for k in p.keep),
                                      answer=None, took_bonus=not p.took_bonus)
        for i, p in enumerate(state.players)
    )
    return replace(state, players=players, location_deck=state.location_deck[::-1],
                   guild_deck=state.guild_deck[::-1], goods_deck=state.goods_deck[::-1],
                   ruby_deck=state.ruby_deck[::-1], caravan_deck=state.caravan_deck[::-1])


def check_views_hide_hands(state: rules.State) -> None:
    if not state.players:
        return
    for viewer in (*range(state.seats), None):
        seen = GAME.view(state, viewer)
        other = GAME.view(others_hands_changed(state, viewer), viewer)
        assert encode(seen) == encode(other), f"seat {viewer}'s view shows another seat's secrets"


@pytest.mark.parametrize("seats", [1, 2, 3, 4, 5])
def test_random_games_end_with_boxes_filled_then_crossed_cards_conserved_and_hands_hidden(seats):
    for seed in range(GAMES_PER_COUNT):
        monotonic = Monotonic()

        def check(table: tbl.Table) -> None:
            state = table.state
            monotonic(state)
            check_conservation(state)
            if table.version % 7 == 0:
                check_views_hide_hands(state)

        table, events = playout(GAME, seats, seed * 10 + seats, check=check)
        assert table.status == tbl.OVER
        assert isinstance(events[-1], GameEnded)
        state = table.state
        assert state.reason in ("rubies", "display", "deck")
        history_hides_hands(table, events)


def history_hides_hands(table: tbl.Table, events: list) -> None:
    """No history entry a seat (or a spectator) reads names a card another seat holds or drew."""
    for event in events:
        for reader in (*range(table.seats), None):
            seen = tbl.redact(table, event, reader)
            owner = getattr(seen, "seat", None)
            if owner is not None and owner != reader:
                for field in ("card", "kept", "action", "bonus"):
                    if hasattr(event, field) and type(event).__name__ in (
                        "LocationDealt", "GuildDrawn", "GoodsCardDrawn", "GuildKept", "Answered"
                    ):
                        assert getattr(seen, field) is None, (event, reader)
            if hasattr(seen, "order"):
                assert seen.order is None


@pytest.mark.parametrize("seats,seed", [(2, 11), (3, 41), (4, 33), (5, 12)])
def test_games_that_go_for_rubies_end_with_the_round_of_the_tenth_ruby(seats, seed):
    """Uniform random play rarely reaches 10 rubies before the deck runs out: these seeds of a ruby-seeking
    policy do. The game ends after the first player's right-hand neighbour's turn, not before."""
    after = []  # the state after each command
    for state, seat, command, events in random_game(seats, seed, ruby_seeker):
        for event in events:
            state = GAME.evolve(state, event)
        after.append(state)
    state = after[-1]
    assert state.reason == "rubies"
    assert state.active == (state.first - 1) % seats  # the first player's right-hand neighbour played last
    ten = next(i for i, s in enumerate(after) if max(p.rubies for p in s.players) >= data.RUBY_TARGET)
    assert [s.stage == rules.OVER for s in after[ten:]] == [False] * (len(after) - ten - 1) + [True]
    if after[ten].active != state.active:
        assert len(after) - ten > 1  # the round went on after the 10th ruby
    winners = state.winners
    best = max((x.rubies, x.tiebreak) for x in state.scores)
    assert winners and all((state.scores[w].rubies, state.scores[w].tiebreak) == best for w in winners)
