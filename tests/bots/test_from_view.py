"""Each game's ``from_view`` hook (a remote bot's only state): for positions of every game, at every seat, the state
built from the seat's view shows that seat the same view and offers it the same legal commands; it draws what the
view hides (two draws differ somewhere), and it depends on the view alone (facts the seat never saw, swapped in the
true state, give the same state)."""

from __future__ import annotations

import random

import msgspec
import pytest

from domain.chance import Chance
from domain.kernel import bot_command, get_game
from tests.bots.knowledge import SWAPS, positions
from tests.bots.support import advanced

# (game, seats): every seat count of every game, positions from the start to late in the game
TABLES = [("yspahan", 2), ("yspahan", 3), ("yspahan", 4), ("samarkand", 3), ("samarkand", 4), ("samarkand", 5),
          ("istanbul", 1), ("istanbul", 2), ("istanbul", 3), ("istanbul", 4), ("istanbul", 5),
          ("karawane", 2), ("karawane", 3), ("karawane", 4)]
DEPTHS = (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610)


def _random(game, state, seat, rng):
    return rng.choice(list(game.legal_commands(state, seat)))


PICKS = (None, None, _random, _random)  # the game's own bot (the seeker in 1001 Karawane), then random play


def _rebuilt(game, state, seat, rng):
    view = game.view(state, seat)
    seen = msgspec.convert(msgspec.to_builtins(view), type(view))  # as the SDK decodes it: no shared objects
    return view, game.from_view(seen, seat, state.seats, state.options, rng)


@pytest.mark.parametrize("name,seats", TABLES)
def test_the_state_built_from_a_seats_view_shows_it_the_same_view_and_the_same_legal_commands(name, seats):
    checked = 0
    for seed, pick in enumerate(PICKS):
        for depth in DEPTHS:
            game, state = advanced(name, seats, seed=40 + seed, commands=depth, pick=pick)
            for seat in range(seats):
                for k in range(2):
                    view, world = _rebuilt(game, state, seat, random.Random(k))
                    assert game.view(world, seat) == view, (seed, depth, seat)
                    assert list(game.legal_commands(world, seat)) == list(game.legal_commands(state, seat)), \
                        (seed, depth, seat)
                    assert game.flow(world) == game.flow(state)
                    assert (game.result(world) is None) == (game.result(state) is None)
                    checked += 1
            if game.result(state) is not None:
                break
    assert checked > 50


# the games' options that change what a seat sees or how a turn flows
VARIANTS = [("samarkand", 3, {"hidden_goods": True}), ("samarkand", 4, {"hidden_goods": True}),
            ("istanbul", 1, {"rules": 1}), ("istanbul", 3, {"rules": 1}), ("karawane", 2, {"rules": 1}),
            ("yspahan", 2, {"caravan_width_2p": 3})]


def _advanced_with(name, seats, options, seed, commands, pick):
    """``support.advanced`` with the game's ``options``."""
    game = get_game(name)
    options = msgspec.convert(options, game.options_type)
    state = game.initial_state(seats, options)
    for event in game.setup(seats, options, Chance(seed.to_bytes(8, "big"), 0)):
        state = game.evolve(state, event)
    rng = random.Random(seed)
    for n in range(commands):
        if game.result(state) is not None:
            break
        seat = rng.choice(game.flow(state).awaiting)
        command = (pick or bot_command)(game, state, seat, rng)
        for event in game.decide(state, seat, command, Chance(seed.to_bytes(8, "big"), n + 1)):
            state = game.evolve(state, event)
    return game, state


@pytest.mark.parametrize("name,seats,options", VARIANTS)
def test_the_same_holds_with_the_options_that_change_what_a_seat_sees(name, seats, options):
    checked = 0
    for seed, pick in enumerate(PICKS):
        for depth in DEPTHS[::2]:
            game, state = _advanced_with(name, seats, options, 60 + seed, depth, pick)
            for seat in range(seats):
                view, world = _rebuilt(game, state, seat, random.Random(seed))
                assert game.view(world, seat) == view, (seed, depth, seat)
                assert list(game.legal_commands(world, seat)) == list(game.legal_commands(state, seat))
                checked += 1
            if game.result(state) is not None:
                break
    assert checked > 20


@pytest.mark.parametrize("name,seats", TABLES)
def test_the_states_built_from_a_view_play_on_like_the_true_one(name, seats):
    """The seat's own command, decided in the rebuilt state, is accepted there as in the true one: the rebuilt
    state is a position the rules can go on from (the bots simulate in it)."""
    for depth in (0, 4, 30, 150):
        game, state = advanced(name, seats, seed=7, commands=depth)
        for seat in game.flow(state).awaiting:
            _, world = _rebuilt(game, state, seat, random.Random(1))
            rng = random.Random(2)
            for command in list(game.legal_commands(world, seat))[:8]:
                from services.bots.strategies import advance, chance

                advance(game, world, seat, command, chance(rng))


@pytest.mark.parametrize("name", sorted(SWAPS))
def test_the_state_built_from_a_view_is_the_same_whatever_the_seat_did_not_see(name):
    for game, state, seat, swapped in positions(name):
        for k in range(3):
            _, one = _rebuilt(game, state, seat, random.Random(k))
            _, other = _rebuilt(game, swapped, seat, random.Random(k))
            assert one == other


@pytest.mark.parametrize("name,seats", [("yspahan", 3), ("samarkand", 3), ("istanbul", 3), ("karawane", 3)])
def test_what_the_view_hides_is_drawn_again(name, seats):
    varied = 0
    for depth in (3, 20, 60):
        game, state = advanced(name, seats, seed=5, commands=depth)
        for seat in range(seats):
            worlds = {repr(_rebuilt(game, state, seat, random.Random(k))[1]) for k in range(4)}
            varied += len(worlds) > 1
    assert varied


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_in_1001_karawane_the_state_built_from_a_view_agrees_with_every_public_clue(seats):
    """A clue (a place used) says one of the hexes its seat crossed is of that kind: the view shows it, so the
    hexes drawn again honour it (a draw that ignored the clues broke one in most late positions)."""
    checked = 0
    for seed, pick in enumerate(PICKS):
        for depth in (60, 150, 250, 400, 600):
            game, state = advanced("karawane", seats, seed=80 + seed, commands=depth, pick=pick)
            for seat in range(seats):
                for k in range(3):
                    _, world = _rebuilt(game, state, seat, random.Random(k))
                    for clue in world.clues:
                        assert any(world.kinds[t] == clue.kind for t in clue.tiles), (seed, depth, seat, clue)
                        checked += 1
    assert checked > 100


def _rebuilt_in_phase(name: str, phase: str, seeds: int, steps: int, choose) -> None:
    """Plays 3-seat games (seeds 0 to ``seeds - 1``, at most ``steps`` commands each, ``choose``'s commands) and,
    at six positions in ``phase``, checks that each seat's view rebuilds a state with the same view and legal
    commands."""
    found = 0
    for seed in range(seeds):
        game, state = _advanced_with(name, 3, {}, seed, 0, None)
        rng = random.Random(seed)
        for n in range(steps):
            if game.result(state) is not None or found >= 6:
                break
            if game.flow(state).phase == phase:
                for seat in range(3):
                    view, world = _rebuilt(game, state, seat, random.Random(n))
                    assert game.view(world, seat) == view and \
                        list(game.legal_commands(world, seat)) == list(game.legal_commands(state, seat)), (seed, n)
                found += 1
            seat = rng.choice(game.flow(state).awaiting)
            command = choose(game, state, seat, rng)
            for event in game.decide(state, seat, command, Chance(seed.to_bytes(8, "big"), n + 1)):
                state = game.evolve(state, event)
        if found >= 6:
            break
    assert found >= 6, f"too few {phase} positions"


@pytest.mark.parametrize("phase", ["keep", "fountain", "draw"])
def test_in_istanbul_the_phases_inside_an_action_are_rebuilt_from_a_view(phase):
    """The decisions taken while an action is settled (caravan card 4's guild card to keep, a fountain's reward,
    the draw after a card from the hand): the turn's flow they sit in is not in the view but read from it."""
    _rebuilt_in_phase("istanbul", phase, 60, 600, _random)


@pytest.mark.parametrize("phase", ["genie", "desert", "home", "equip", "after"])
def test_in_1001_karawane_every_stage_of_a_turn_is_rebuilt_from_a_view(phase):
    """A genie's second hex (the stage it returns to is not in the view), the desert phase, home, equipping, after
    the move: the turn's flags the view does not spell out are read from it."""
    _rebuilt_in_phase("karawane", phase, 80, 800, lambda game, state, seat, rng: (
        bot_command if rng.random() < 0.7 else _random)(game, state, seat, rng))
