"""Helpers shared by the Karawane tests: setups without chance, given/when/then specs, seeded random games and a
policy that goes for artifacts (random play almost never ends this game)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from contracts.karawane import (
    DesertLaid,
    FirstPlayerChosen,
    Options,
    ThiefTurned,
    TurnStarted,
)
from domain import kernel
from domain.chance import Chance
from domain.karawane import GAME, bot, data, rules
from tests.domain.harness import Spec

replace = msgspec.structs.replace


def ensure_registered() -> None:
    """The table finds games through the registry; ``domain.games`` registers Karawane, this is for the tests run
    without it (once: not when ``domain.games`` already did)."""
    if kernel.get_game(GAME.name) is None:
        kernel.register(GAME)


ensure_registered()


def cell(q: int, r: int) -> int:
    return data.cell(q, r)


def layout(sector: str, places: dict[str, tuple[int, int]]) -> tuple[str, ...]:
    """A sector's kinds in cell order, with the named places at the given (q, r) and plain desert elsewhere."""
    at = {data.cell(q, r): kind for kind, (q, r) in places.items()}
    assert sorted(at.values()) == sorted(data.sector_tiles(sector)[data.PLAINS_PER_SECTOR:])
    return tuple(at.get(c, data.PLAIN) for c in data.SECTOR_CELLS[sector])


# A known desert for the rule tests. Red (q 0-3, r 0-3) is next to the known sector's west edge (q 4).
RED_PLACES = {"city": (3, 0), "oasis": (3, 1), "caravanserai": (3, 2), "tower": (2, 0)}
BLUE_PLACES = {"city": (4, 4), "oasis": (5, 4), "caravanserai": (6, 4), "mausoleum": (7, 4)}
GREEN_PLACES = {"city": (0, 7), "oasis": (1, 7), "caravanserai": (2, 7), "ruins": (3, 4)}


def table_setup(first: int = 0, thieves: int = 1,
                places: Sequence[dict[str, tuple[int, int]]] = (RED_PLACES, BLUE_PLACES, GREEN_PLACES)) -> list[Any]:
    """The events of a setup without chance: the desert of ``places``, seat ``first`` first, a thief card."""
    events: list[Any] = [DesertLaid(sector=s, kinds=layout(s, p)) for s, p in zip(data.SECTORS, places)]
    return events + [FirstPlayerChosen(seat=first), ThiefTurned(round=1, thieves=thieves), TurnStarted(seat=first,
                                                                                                         round=1)]


def spec(seats: int = 3, rules_revision: int = rules.RULES, **kwargs: Any) -> Spec:
    """A game at its start (``table_setup``), under the newest rules unless ``rules_revision`` says another."""
    return Spec(GAME, seats, Options(rules=rules_revision)).given(table_setup(**kwargs))


def with_seat(state: rules.State, seat: int, **fields: Any) -> rules.State:
    p = replace(state.players[seat], **fields)
    return replace(state, players=state.players[:seat] + (p,) + state.players[seat + 1:])


def with_hand(state: rules.State, seat: int, **fields: Any) -> rules.State:
    """The seat holds these cards (taken from the supply, so that the cards stay conserved)."""
    before = state.players[seat].hand
    hand = replace(before, **fields)
    pile = state.supply
    delta = {k: getattr(pile, k) - (getattr(hand, k) - getattr(before, k))
             for k in ("camel_drivers", "water_skins", "goods")}
    delta["ones"] = pile.ones - (hand.gold - before.gold)
    counts = list(pile.artifacts)
    for a in hand.artifacts:
        counts[rules.ART_INDEX[a]] -= 1
    for a in before.artifacts:
        counts[rules.ART_INDEX[a]] += 1
    state = replace(state, supply=replace(pile, artifacts=tuple(counts), **delta))
    return with_seat(state, seat, hand=hand)


def at(s: Spec, seat: int, where: int, **hand: Any) -> Spec:
    """Seat ``seat``'s caravan at ``where`` holding ``hand``, its turn (re)started there."""
    state = with_seat(s.state, seat, cell=where)
    if hand:
        state = with_hand(state, seat, **hand)
    s.state = state
    return s.given([TurnStarted(seat=seat, round=s.state.round)])


def play(s: Spec, seat: int, *commands: Any) -> list[Any]:
    """Each command decided and folded in turn; all their events."""
    events: list[Any] = []
    for command in commands:
        new = s.decide(seat, command)
        s.given(new)
        events += new
    return events


# --- random games ---------------------------------------------------------------------------------------

distance, target, seeker = bot.distance, bot.target, bot.choose  # the game's own bot (domain/karawane/bot.py)


def random_game(seats: int, seed: int, policy: Any = seeker, max_rounds: int | None = None,
                rules_revision: int = rules.RULES) -> Iterator[tuple[rules.State, int, Any, list[Any]]]:
    """A random game on the bare decider (no table): yields (state, seat, command, events) per command, the state
    being the one the command was decided on; stops at the end, or after ``max_rounds`` rounds."""
    rng = random.Random(seed)
    secret = seed.to_bytes(8, "big")
    options = Options(rules=rules_revision)
    state = GAME.initial_state(seats, options)
    for event in GAME.setup(seats, options, Chance(secret, 0)):
        state = GAME.evolve(state, event)
    position = 1
    while GAME.result(state) is None and (max_rounds is None or state.round <= max_rounds):
        seat = GAME.flow(state).awaiting[0]
        legal = GAME.legal_commands(state, seat)
        command = policy(rng, state, seat, legal) if policy else rng.choice(legal)
        events = GAME.decide(state, seat, command, Chance(secret, position))
        yield state, seat, command, events
        for event in events:
            state = GAME.evolve(state, event)
        position += 1
