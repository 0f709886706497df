"""Bots never know more than their seat: facts it never saw swapped (other hands, deck orders, hexes it never
looked at, a choice not revealed yet), the decision of every strategy, with the same seeded rng, stays the same."""

from __future__ import annotations

import random

import pytest

from services.bots import strategy
from tests.bots.knowledge import SWAPS, positions

STRATEGIES = {"greedy": {"samples": 2}, "mcts": {"budget": None, "iterations": 25, "rollout": 12}, "seeker": {},
              "mcts-random": {"budget": None, "iterations": 25, "rollout": 12, "policy": "random"},
              "mcts-seeker": {"budget": None, "iterations": 25, "rollout": 12, "policy": "seeker"},
              "mcts-expand": {"budget": None, "iterations": 25, "rollout": 12, "expand": "greedy"},
              "mcts-all": {"budget": None, "iterations": 25, "rollout": 12, "search": "all"}}


@pytest.mark.parametrize("name", sorted(SWAPS))
def test_a_swap_of_what_the_seat_never_saw_leaves_its_view_and_changes_the_state(name):
    found = positions(name)
    assert len(found) >= 4, f"too few positions where {name}'s swap changes anything"


@pytest.mark.parametrize("name", sorted(SWAPS))
def test_determinize_gives_the_same_world_whatever_the_seat_did_not_see(name):
    for game, state, seat, swapped in positions(name):
        for k in range(3):
            assert game.determinize(state, seat, random.Random(k)) == game.determinize(swapped, seat, random.Random(k))


@pytest.mark.parametrize("name", sorted(SWAPS))
@pytest.mark.parametrize("kind", sorted(STRATEGIES))
def test_a_bots_decision_does_not_change_when_facts_it_never_saw_are_swapped(name, kind):
    if kind == "seeker" and name != "karawane":
        pytest.skip("the seeker is 1001 Karawane's own bot (random elsewhere)")
    bot = strategy(kind.split("-")[0], **STRATEGIES[kind])
    for game, state, seat, swapped in positions(name, count=4):
        # two seeds of the bot's own chance, one for the searches (a second for Istanbul's five cost 75 s of CI)
        for k in range(1 if kind.startswith("mcts") else 2):
            assert bot.choose(game, state, seat, random.Random(k)) == bot.choose(game, swapped, seat, random.Random(k))


class _Cheat:
    """A game whose determinization is the true state itself: a bot that reads what its seat may not."""

    def __init__(self, game):
        self.game = game
        self.title = game.title

    def __getattr__(self, attr):
        return getattr(self.game, attr)

    def determinize(self, state, seat, rng):
        return state


@pytest.mark.parametrize("name", sorted(SWAPS))
def test_the_check_catches_a_bot_that_reads_the_true_state(name):
    """The same comparison, for greedy and mcts over a cheating determinization: some decisions change, so the
    test above would fail for a bot that knows more than its seat. The first change found is enough (Istanbul's
    searches cost about a second each: the 32 of them took 18 s of the suite's time)."""
    tried = 0
    for game, state, seat, swapped in positions(name, count=8):
        for kind in ("greedy", "mcts"):
            bot = strategy(kind, **STRATEGIES[kind])
            cheat = _Cheat(game)
            tried += 1
            if bot.choose(cheat, state, seat, random.Random(0)) != bot.choose(cheat, swapped, seat, random.Random(0)):
                return
    pytest.fail(f"none of {tried} decisions over the true state changed when the unseen facts were swapped")
