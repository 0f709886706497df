"""Istanbul: Choose & Write for bots: how good a position looks to a seat (``evaluate``) and a world it cannot tell
from the true one (``determinize``). Pure; the kernel's optional hooks of the same names (``services.bots``).

What a seat does not know (``views``): the other hands (location, guild and goods cards, a guild card to keep),
every deck's order, and another seat's answer to the played card until the turn resolves. The sheets, the display,
the palace, the discard piles and every count are public.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import msgspec

from domain.istanbul import data
from domain.istanbul.rules import State, tiebreak

replace = msgspec.structs.replace


def evaluate(state: State, seat: int) -> float:
    """Rubies first, then the tie-break (unspent lira, goods and bonus boxes, goods cards), then the sheet's
    progress (upgrades, boxes ever filled), less the best other sheet's (sheets are public)."""
    def worth(i: int) -> float:
        p = state.players[i]
        return 20.0 * p.rubies + tiebreak(p) + 1.5 * sum(p.upgrades) + 0.5 * (sum(p.goods) + p.lira + p.bonus)

    if not state.players:
        return 0.0
    others = [worth(i) for i in range(state.seats) if i != seat]
    return worth(seat) - (max(others) if others else 0.0)


def _deal(pool: list[Any], sizes: Sequence[int], rng: random.Random) -> tuple[list[tuple], tuple]:
    """``pool`` (sorted first: its order tells nothing) shuffled, a hand of each size dealt, the rest a deck."""
    pool = sorted(pool)
    rng.shuffle(pool)
    hands = []
    for n in sizes:
        hands.append(tuple(sorted(pool[:n])))
        pool = pool[n:]
    return hands, tuple(pool)


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """``state`` with what ``seat`` has not seen drawn again with ``rng``: the other hands dealt again from their
    cards and the decks' (each hand keeps its size), the decks' order (caravan and ruby decks too) shuffled, and
    the others' answers to the played card taken back (they answer again in the simulation). Built only from what
    the seat knows: two states it cannot tell apart give the same result for the same ``rng``."""
    others = [i for i in range(state.seats) if i != seat]
    ps = list(state.players)
    # a fountain is turned face up as soon as it is drawn (``_Run.reveal``): no hand holds one, it stays in the deck
    fountains = [c for c in state.location_deck if data.LOCATION_CARDS[c].fountain is not None]
    hands, rest = _deal([*(c for c in state.location_deck if data.LOCATION_CARDS[c].fountain is None),
                         *(c for i in others for c in ps[i].hand)], [len(ps[i].hand) for i in others], rng)
    _, location_deck = _deal([*rest, *fountains], [], rng)
    guild_sizes = [n for i in others for n in (len(ps[i].guild), len(ps[i].keep))]
    guilds, guild_deck = _deal([*state.guild_deck, *(c for i in others for c in (*ps[i].guild, *ps[i].keep))],
                               guild_sizes, rng)
    cards, goods_deck = _deal([*state.goods_deck, *(c for i in others for c in ps[i].cards)],
                              [len(ps[i].cards) for i in others], rng)
    for n, i in enumerate(others):
        p = replace(ps[i], hand=hands[n], guild=guilds[2 * n], keep=guilds[2 * n + 1], cards=cards[n])
        if p.answered and i in state.pending:
            p = replace(p, answered=False, answer=None, took_bonus=False)
        ps[i] = p
    caravan = sorted(state.caravan_deck)
    rng.shuffle(caravan)
    ruby = sorted(state.ruby_deck)
    rng.shuffle(ruby)
    return replace(state, players=tuple(ps), location_deck=location_deck, guild_deck=guild_deck,
                   goods_deck=goods_deck, caravan_deck=tuple(caravan), ruby_deck=tuple(ruby))


def _unseen(everything: Sequence[Any], *seen: Sequence[Any]) -> list[Any]:
    """``everything`` (a multiset) less each card of ``seen``, sorted (its order tells nothing)."""
    pool = list(everything)
    for cards in seen:
        for card in cards:
            pool.remove(card)
    return sorted(pool)


def from_view(view: Any, seat: int, seats: int, options: Any, rng: random.Random) -> State:
    """A state consistent with everything ``view`` (``seat``'s ``IstanbulView``) shows, what it does not show
    drawn with ``rng`` as ``determinize`` draws it: the other hands (location, guild, goods cards, each its size;
    a guild card to keep, two, for another seat awaited to keep one) dealt from the cards the seat has not seen,
    the rest the decks (each its size) in a random order, fountains in the location deck only; another seat's
    secret answer one of its legal ones at random. The turn's flow the view does not spell out is read from what
    it shows: the stage from the phase, a card played from the hand when the active seat's hand is empty (hands
    hold one location card between turns), the seats owed a card. Not shown and not derivable: the letters where a
    ruby was taken and whether the caravan card was used in the action being settled (none taken; a bot's
    simulation of the end of that action may differ), the solo challenges' counters (zero).
    ``view(state, seat) == view``. A remote bot (``services.client.remote_bot``) holds nothing else."""
    from domain.istanbul.rules import ACT, AFTER, OVER, SETUP, TURN, Seat, legal_commands

    you = view.you
    sheets = view.players
    others = [i for i in range(seats) if i != seat]
    phase = view.phase
    keeping = phase == "keep"

    # the location cards: fountains are turned face up when drawn, so no hand holds one
    unseen = _unseen(range(len(data.LOCATION_CARDS)), you.hand, view.display, view.location_discard)
    fountains = [c for c in unseen if data.LOCATION_CARDS[c].fountain is not None]
    hands, rest = _deal([c for c in unseen if data.LOCATION_CARDS[c].fountain is None],
                        [sheets[i].hand for i in others], rng)
    _, location_deck = _deal([*rest, *fountains], [], rng)
    guild_pool = _unseen([g.id for g in data.GUILD_CARDS], you.guild_cards, you.keep, view.guild_discard)
    kept = len(guild_pool) - view.guild_deck - sum(sheets[i].guild_cards for i in others)  # held to keep one
    keep_sizes = []
    for i in others:  # two cards each (caravan card 4), as far as the cards held to keep one go
        n = min(2, max(0, kept)) if keeping and i in view.awaiting else 0
        keep_sizes.append(n)
        kept -= n
    guild_sizes = [n for k, i in enumerate(others) for n in (sheets[i].guild_cards, keep_sizes[k])]
    guilds, guild_deck = _deal(guild_pool, guild_sizes, rng)
    goods_pool = _unseen(data.GOODS_CARDS, you.goods_cards, view.goods_discard)
    cards, goods_deck = _deal(goods_pool, [sheets[i].goods_cards for i in others], rng)
    caravan_deck = _unseen(sorted(data.CARAVAN_CARDS), [view.caravan] if view.caravan is not None else [])
    rng.shuffle(caravan_deck)
    palace = tuple(p.cards for p in view.palace)
    ruby_deck = _unseen(range(len(data.RUBY_CARDS)), [c for cards_ in palace for c in cards_])
    rng.shuffle(ruby_deck)

    players = []
    for i, sheet in enumerate(sheets):
        p = Seat(first=sheet.first, rubies=sheet.rubies, lira=sheet.lira_filled, lira_x=sheet.lira_crossed,
                 goods=tuple(sheet.goods_filled), goods_x=tuple(sheet.goods_crossed), bonus=sheet.bonus_filled,
                 bonus_x=sheet.bonus_crossed, bonus_boxes=sheet.bonus_boxes,
                 icons=tuple(sheet.icons_crossed.get(loc, 0) for loc in data.LOCATIONS),
                 upgrades=tuple(sheet.upgrades.get(loc, 0) for loc in data.UPGRADABLE),
                 ruby_bonuses=tuple(sheet.ruby_bonuses), answered=sheet.answered,
                 fountain=phase == "fountain" and i in view.awaiting)
        if i == seat:
            p = replace(p, hand=tuple(you.hand), guild=tuple(you.guild_cards), cards=tuple(you.goods_cards),
                        answered=sheet.answered, answer=you.answer, took_bonus=you.took_bonus, keep=tuple(you.keep))
        else:
            n = others.index(i)
            p = replace(p, hand=hands[n], guild=guilds[2 * n], keep=guilds[2 * n + 1], cards=cards[n])
        players.append(p)
    assert len(location_deck) == view.location_deck and len(guild_deck) == view.guild_deck \
        and len(goods_deck) == view.goods_deck and len(ruby_deck) == view.ruby_deck, "the card counts do not add up"

    active = view.active
    played_location = view.played is not None and view.guild_played is None
    solo = phase == "solo"
    if phase in ("setup", "turn", "over"):
        stage = {"setup": SETUP, "turn": TURN, "over": OVER}[phase]
    elif phase in ("act", "solo"):
        stage = ACT
    elif active is None:  # a fountain in the first deal
        stage = SETUP
    else:
        stage = AFTER
    hand_empty = active is not None and sheets[active].hand == 0
    from_hand = stage in (ACT, AFTER) and played_location and not solo and (hand_empty or phase == "draw")
    if stage == SETUP:
        owed = tuple(i for i in range(seats) if sheets[i].hand == 0)
    elif stage == AFTER and phase == "fountain" and from_hand and hand_empty:
        owed = (active,)  # its draw from the deck turned up a fountain: its card comes next
    else:
        owed = ()
    if stage == ACT:
        pending = (0,) if solo else (active,) if view.guild_played is not None else tuple(range(seats))
    else:
        pending = ()
    state = State(
        seats=seats, options=options, side=view.side, stage=stage, players=tuple(players),
        location_deck=location_deck, location_discard=tuple(view.location_discard), display=tuple(view.display),
        guild_deck=guild_deck, guild_discard=tuple(view.guild_discard), goods_deck=goods_deck,
        goods_discard=tuple(view.goods_discard), caravan_deck=tuple(caravan_deck), caravan=view.caravan,
        ruby_deck=tuple(ruby_deck), palace=palace, first=view.first, active=active, round=view.round,
        played=view.played, guild_played=view.guild_played, from_hand=from_hand,
        drawn=stage == AFTER and from_hand and not hand_empty and phase != "draw",
        free_seat=None if solo else active,
        pending=pending, owed=owed, fountain=view.fountain, solo_done=solo, scores=view.scores,
        winners=view.winners, challenges=tuple(view.challenges), column=view.column)
    if stage == ACT:  # another seat's answer, secret: one of its legal answers at random
        ps = list(state.players)
        for i in others:
            if ps[i].answered:
                bare = replace(state, players=tuple(replace(p, answered=False) if k == i else p
                                                    for k, p in enumerate(ps)))
                answer = rng.choice(list(legal_commands(bare, i)))
                bonus = type(answer).__name__ == "TakeBonus"
                ps[i] = replace(ps[i], answer=None if bonus else _action_of(bare, i, answer), took_bonus=bonus)
        state = replace(state, players=tuple(ps))
    return state


def _action_of(state: State, seat: int, command: Any) -> Any:
    """The ``Action`` an answer ``Act`` records (as ``rules._answer`` records it)."""
    from domain.istanbul.rules import _action, _check_act

    return _check_act(state, seat, _action(command))
