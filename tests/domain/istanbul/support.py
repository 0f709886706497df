"""Helpers shared by the Istanbul tests: setups without chance, given/when/then specs, seeded random games."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contracts.istanbul import (
    CaravanTurned,
    DeckShuffled,
    FirstPlayerChosen,
    GoodsDeckShuffled,
    LocationDealt,
    LocationRevealed,
    Options,
    RubyCardPlaced,
    SheetsPrepared,
    TurnStarted,
)
from domain.istanbul import GAME, data, rules
from tests.domain.harness import Spec


def card_of(location: str, copy: int = 0) -> int:
    """The id of a location card (``copy`` 0 or 1)."""
    return [c.id for c in data.LOCATION_CARDS if c.location == location][copy]


def fountain_card(reward: str) -> int:
    return next(c.id for c in data.LOCATION_CARDS if c.fountain == reward)


def table_setup(
    seats: int,
    hands: Sequence[str],
    display: Sequence[str] = ("2", "3"),
    deck: Sequence[int] = (),
    first: int = 0,
    caravan: int = 1,
    ruby_order: Sequence[int] = tuple(range(20)),
    guild_order: Sequence[int] = tuple(range(1, 17)),
    goods_order: Sequence[str] = data.GOODS_CARDS,
) -> list[Any]:
    """The events of a setup without chance: the hands' and display's location cards (second copies for the
    display), then ``deck`` (card ids) on top of the rest of the location deck; the ruby cards in ``ruby_order``;
    the first turn started."""
    used = [card_of(loc) for loc in hands] + [card_of(loc, 1) for loc in display]
    rest = [c.id for c in data.LOCATION_CARDS if c.id not in used and c.id not in deck and c.fountain is None]
    location_order = tuple(used) + tuple(deck) + tuple(rest)
    caravans = (caravan,) + tuple(c for c in sorted(data.CARAVAN_CARDS) if c != caravan)
    side = data.side(seats)
    events: list[Any] = [
        SheetsPrepared(side=side, thick_icons_crossed=side == data.SIDE_SMALL and seats <= 2,
                       thick_bonus_crossed=seats == 4),
        DeckShuffled(deck="ruby", order=tuple(ruby_order), size=len(ruby_order)),
        DeckShuffled(deck="location", order=location_order, size=len(location_order)),
        DeckShuffled(deck="guild", order=tuple(guild_order), size=len(guild_order)),
        DeckShuffled(deck="caravan", order=caravans, size=len(caravans)),
        GoodsDeckShuffled(order=tuple(goods_order), size=len(goods_order)),
    ]
    k = 0
    for tucked in range(data.RUBY_CARDS_PER_LETTER[seats]):
        for letter in data.LETTERS:
            events.append(RubyCardPlaced(letter=letter, card=ruby_order[k], tucked=tucked > 0))
            k += 1
    events.append(CaravanTurned(card=caravan))
    # the deck's first cards are the hands' then the display's: reveal the display after dealing, by hand
    order_hands = tuple(card_of(loc) for loc in hands)
    events[2] = DeckShuffled(
        deck="location",
        order=tuple(card_of(loc, 1) for loc in display) + order_hands + tuple(deck) + tuple(rest),
        size=len(location_order),
    )
    for loc in display:
        events.append(LocationRevealed(card=card_of(loc, 1), slot="right"))
    for seat, loc in enumerate(hands):
        events.append(LocationDealt(seat=seat, card=card_of(loc)))
    events += [FirstPlayerChosen(seat=first), TurnStarted(seat=first, round=1)]
    return events


def spec(seats: int, hands: Sequence[str], rules_revision: int = rules.RULES, **kwargs: Any) -> Spec:
    """A game at its start (``table_setup``), under the newest rules unless ``rules_revision`` says another."""
    return Spec(GAME, seats, Options(rules=rules_revision)).given(table_setup(seats, hands, **kwargs))


def sheet(state: rules.State, seat: int) -> rules.Seat:
    return state.players[seat]


# --- given/when/then in a turn --------------------------------------------------------------------------

import msgspec  # noqa: E402

from contracts.istanbul import Act, PlayLocation, TakeBonus  # noqa: E402

OTHER_HANDS = ("1", "5", "10", "14", "4", "9")


def with_sheet(state: rules.State, seat: int, **fields: Any) -> rules.State:
    p = msgspec.structs.replace(state.players[seat], **fields)
    return msgspec.structs.replace(state, players=state.players[:seat] + (p,) + state.players[seat + 1:])


def at_act(location: str, seats: int = 2, sheets: dict[int, dict] | None = None, **kwargs: Any) -> Spec:
    """Seat 0 (active) played ``location`` from its hand; every seat is to answer. ``sheets``: fields of seats'
    sheets (``rules.Seat``) set before the card is played."""
    hands = [location] + [h for h in OTHER_HANDS if h != location][: seats - 1]
    s = spec(seats, hands, **kwargs)
    for seat, fields in (sheets or {}).items():
        s.state = with_sheet(s.state, seat, **fields)
    return s.given(s.decide(0, PlayLocation(source="hand")))


def answer_all(s: Spec, answers: dict[int, Any]) -> list[Any]:
    """Each seat's answer in seat order (default ``TakeBonus``; seats that answered already are left out); the
    events of all of them, folded into ``s``."""
    events: list[Any] = []
    for seat in [p for p in s.state.pending if not s.state.players[p].answered]:
        command = answers.get(seat, TakeBonus())
        new = s.decide(seat, command)
        s.given(new)
        events.extend(new)
    return events


def act(location: str, via: str = "free", **fields: Any) -> Act:
    return Act(location=location, via=via, **fields)


def random_game(seats: int, seed: int, policy: Any = None, rules_revision: int = rules.RULES):
    """A random game on the bare decider (no table): yields (state, seat, command, events) per command, the state
    being the one the command was decided on. ``policy(rng, state, seat, legal)`` picks the command (default:
    uniformly among the legal ones)."""
    import random

    from domain.chance import Chance

    rng = random.Random(seed)
    secret = seed.to_bytes(8, "big")
    options = Options(rules=rules_revision)
    state = GAME.initial_state(seats, options)
    for event in GAME.setup(seats, options, Chance(secret, 0)):
        state = GAME.evolve(state, event)
    position = 1
    while GAME.result(state) is None:
        seat = rng.choice(GAME.flow(state).awaiting)
        legal = GAME.legal_commands(state, seat)
        command = policy(rng, state, seat, legal) if policy else rng.choice(legal)
        events = GAME.decide(state, seat, command, Chance(secret, position))
        yield state, seat, command, events
        for event in events:
            state = GAME.evolve(state, event)
        position += 1


def ruby_seeker(rng: Any, state: rules.State, seat: int, legal: Sequence[Any]) -> Any:
    """A policy that goes for rubies: a palace letter, the Gem Merchant or a ruby guild card when it can, else
    plays a guild card when it can, else a random legal command."""
    from contracts.istanbul import PlayGuild

    def rubyish(c: Any) -> bool:
        if isinstance(c, Act):
            place = c.target or c.location
            return place in data.LETTERS or place == "2" or (c.location is None and state.guild_played in range(10, 17))
        return isinstance(c, PlayGuild)

    best = [c for c in legal if rubyish(c)]
    return rng.choice(best) if best and rng.random() < 0.9 else rng.choice(list(legal))
