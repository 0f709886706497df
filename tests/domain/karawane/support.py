"""Helpers shared by the Karawane tests: setups without chance, given/when/then specs, seeded random games and a
policy that goes for artifacts (random play almost never ends this game)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from contracts.karawane import (
    BuyArtifact,
    DesertLaid,
    EndTurn,
    Equip,
    FirstPlayerChosen,
    Options,
    PlayGenie,
    PlayMap,
    Step,
    StopMoving,
    Supply,
    SwapWith,
    TakeArtifact,
    ThiefTurned,
    Trade,
    TurnStarted,
)
from domain import kernel
from domain.chance import Chance
from domain.karawane import GAME, data, rules
from tests.domain.harness import Spec

replace = msgspec.structs.replace


def ensure_registered() -> None:
    """The table finds games through the registry; Karawane is not in ``domain.games`` yet (registered after
    review), so its tests register it themselves (once: not when ``domain.games`` already does)."""
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


def spec(seats: int = 3, **kwargs: Any) -> Spec:
    return Spec(GAME, seats, Options()).given(table_setup(**kwargs))


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

def distance(a: int, b: int) -> int:
    (q1, r1), (q2, r2) = data.coords(a), data.coords(b)
    dq, dr = q1 - q2, r1 - r2
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def target(state: rules.State, seat: int) -> int:
    """Where the artifact seeker heads: home with an artifact or gold in hand (or to buy one), or short of water
    or camel drivers; else a magic place
    it knows for an artifact it lacks, a city it knows with goods in hand, the nearest hex it has not looked at."""
    me = state.players[seat]
    here = me.cell
    assert here is not None
    thirsty = me.hand.water_skins <= 1 or me.hand.camel_drivers == 0
    if me.hand.artifacts or me.hand.gold >= 3 or thirsty or (me.gold >= data.ARTIFACT_PRICE and not rules.complete(me)):
        return data.HOME
    known = set(me.seen) | set(state.face_up)
    where = rules.cell_of(state)
    wanted = [rules.magic_place(a) for a in data.ARTIFACTS if not me.owns(a)]
    if me.hand.goods:
        wanted.append(data.CITY)
    spots = [where[t] for t in known if state.kinds[t] in wanted and where[t] != here]
    if not spots:
        spots = [c for c in data.DESERT_CELLS if state.board[c] not in known]
    if not spots:
        return data.HOME
    return min(spots, key=lambda c: (distance(here, c), c))


def seeker(rng: random.Random, state: rules.State, seat: int, legal: Sequence[Any]) -> Any:
    """A policy biased toward artifacts and home: equips 2 camel drivers, 3 water skins, 1 goods, heads for ``target``, trades and takes what it can,
    buys artifacts, keeps its caravan in order when it can; now and then a random legal command (tokens too)."""
    if rng.random() < 0.05:
        return rng.choice(list(legal))
    by_type: dict[type, list[Any]] = {}
    for c in legal:
        by_type.setdefault(type(c), []).append(c)
    if Equip in by_type:
        best = Equip(camel_drivers=2, water_skins=3, goods=1)
        return best if best in legal else rng.choice(by_type[Equip])
    for kind in (TakeArtifact, BuyArtifact):
        if kind in by_type:
            return by_type[kind][0]
    if Trade in by_type:
        return by_type[Trade][-1]
    if Step in by_type:
        me = state.players[seat]
        goal = target(state, seat)
        if me.cell == goal == data.HOME and state.turn is not None and state.turn.path:
            return StopMoving()
        return min(by_type[Step], key=lambda c: (distance(c.to, goal), rng.random()))
    if SwapWith in by_type:
        return rng.choice(by_type[SwapWith])
    if Supply in by_type:
        ok = [c for c in by_type[Supply] if c.water is not None and c.thieves is not None]
        return rng.choice(ok or by_type[Supply])
    if EndTurn in by_type:
        return EndTurn()
    return rng.choice([c for c in legal if not isinstance(c, (PlayMap, PlayGenie))] or list(legal))


def random_game(seats: int, seed: int, policy: Any = seeker, max_rounds: int | None = None
                ) -> Iterator[tuple[rules.State, int, Any, list[Any]]]:
    """A random game on the bare decider (no table): yields (state, seat, command, events) per command, the state
    being the one the command was decided on; stops at the end, or after ``max_rounds`` rounds."""
    rng = random.Random(seed)
    secret = seed.to_bytes(8, "big")
    options = Options()
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
