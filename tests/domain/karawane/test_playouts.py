"""Seeded games of 1001 Karawane through the table (``domain.table``), 2 to 5 players, played by the artifact
seeker (``support.seeker``: uniform random play almost never ends this game, so the policy goes for artifacts and
heads home with one; 5% of its choices are uniformly random among the legal commands). Every game must end.

After every event: cards are conserved (every equipment card, gold card and artifact is in the supply, a hand or
laid out at home; hands never over 6), tokens never negative. Every command the policy picks is a legal one and is
accepted; seats not awaited have no legal command; ``views`` is ``view`` for every reader; an event a spectator
reads whole hides nothing from a seat; replaying the events gives the same table.

``SOUK_KARAWANE_PLAYOUTS`` sets how many games per player count in the slow test (default 10).
"""

from __future__ import annotations

import os
import random

import msgspec
import pytest

from contracts.table import GameEnded
from domain import table as tbl
from domain.chance import Chance
from domain.karawane import GAME, data, rules
from domain.kernel import RuleViolation
from tests.domain.harness import start_table, token_hash
from tests.domain.karawane.support import seeker

GAMES_PER_COUNT = int(os.environ.get("SOUK_KARAWANE_PLAYOUTS", "10"))


def check_conservation(state: rules.State) -> None:
    if not state.players:
        return
    pile = state.supply
    for kind in data.EQUIPMENT:
        assert getattr(pile, kind) + sum(getattr(p.hand, kind) for p in state.players) == data.EQUIPMENT_CARDS[kind]
    assert pile.ones + sum(p.hand.gold + p.ones for p in state.players) == data.GOLD_ONES
    assert pile.threes + sum(p.threes for p in state.players) == data.GOLD_THREES
    for k, artifact in enumerate(data.ARTIFACTS):
        held = sum(p.hand.artifacts.count(artifact) + p.artifacts.count(artifact) for p in state.players)
        assert pile.artifacts[k] + held == data.ARTIFACT_CARDS
    for p in state.players:
        assert 0 <= p.hand.size <= data.HAND_LIMIT and 0 <= p.tokens <= data.TOKENS_PER_SEAT
        assert min(p.hand.camel_drivers, p.hand.water_skins, p.hand.goods, p.hand.gold, p.ones, p.threes) >= 0
        owned = list(p.artifacts) + list(p.hand.artifacts)
        assert len(owned) == len(set(owned))  # one of each kind
        assert (p.cell is None) == p.lost
    assert sorted(state.board) == sorted(data.DESERT_CELLS + (rules.NO_HEX,) * len(data.KNOWN_CELLS))


BOUND = 20_000  # commands: the bound a playout stops at when the bot has not ended the game (reported)


def play(seats: int, seed: int, bounded: bool = False) -> tuple[tbl.Table, list]:
    """A seeded game played by the game's bot (``seeker``) with every check after every event. ``bounded``: a game
    still running after ``BOUND`` commands stops there (its checks held); else it fails the test."""
    rng = random.Random(seed)
    secret = seed.to_bytes(8, "big")
    table, events = start_table(GAME, seats, seed=secret)
    for n in range(BOUND):
        if table.status == tbl.OVER:
            break
        flow = tbl.flow(table)
        assert flow.awaiting, f"stuck in {flow.phase}"
        seat = flow.awaiting[0]
        legal = list(GAME.legal_commands(table.state, seat))
        assert legal, f"seat {seat} awaited in {flow.phase} without a legal command"
        assert all(not GAME.legal_commands(table.state, o) for o in range(seats) if o not in flow.awaiting)
        command = seeker(rng, table.state, seat, legal)
        assert command in legal
        try:
            new = tbl.decide(table, seat, token_hash(seat), command, Chance(secret, table.version))
        except RuleViolation as exc:  # pragma: no cover
            pytest.fail(f"legal command {command!r} refused: {exc.code} {exc.message}")
        for event in new:
            table = tbl.evolve(table, event)
            if tbl.redact(table, event, None) is event:
                assert all(tbl.redact(table, event, s) is event for s in range(seats)), event
            check_conservation(table.state)
        if n % 25 == 0:
            every = GAME.views(table.state)
            assert all(every[r] == GAME.view(table.state, r) for r in every)
        events.extend(new)
    else:
        if not bounded:
            pytest.fail(f"game not over after {BOUND} commands")
    assert msgspec.json.encode(tbl.fold(events)) == msgspec.json.encode(table), "replay gave another state"
    return table, events


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_a_seeded_game_ends_with_cards_conserved_and_replays_to_the_same_state(seats):
    table, events = play(seats, 100 + seats)
    assert isinstance(events[-1], GameEnded)
    state = table.state
    assert state.winners and all(rules.complete(state.players[w]) for w in state.winners)
    best = max(state.players[w].gold for w in state.winners)
    assert all(state.players[w].gold == best for w in state.winners)
    assert all(state.players[i].gold < best for i in range(seats) if rules.complete(state.players[i])
               and i not in state.winners)


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_many_seeded_games_end_with_cards_conserved(seats):
    """Policy and bound (issue #12: random play rarely ends this game): the bot of ``domain/karawane/bot.py``
    plays every seat, and a game still running after ``BOUND`` commands is stopped there and reported (every check
    held until then). With SOUK_KARAWANE_PLAYOUTS=500 (2,000 games, 9 min), 2026-11-26: 1,986 ended, 14 (1 / 5 /
    5 / 3 for 2 / 3 / 4 / 5 seats) reached the bound (the bot going round in circles, not a rule: every check
    held); at least 90% must end."""
    rounds, bounded = [], 0
    for seed in range(GAMES_PER_COUNT):
        table, _ = play(seats, 1000 * seats + seed, bounded=True)
        if table.status == tbl.OVER:
            rounds.append(table.state.round)
        else:
            bounded += 1
    print(f"{seats} seats: {len(rounds)} games ended (rounds {sorted(rounds)}), {bounded} stopped at the bound "
          f"of {BOUND} commands")
    assert len(rounds) >= 0.9 * GAMES_PER_COUNT, f"{bounded} of {GAMES_PER_COUNT} games did not end"
