"""Istanbul: Choose & Write: state, setup, decide, evolve, legal commands, flow and result.

A turn: the active seat plays a location card (from its hand or the display) or a guild card. After a location
card every seat answers at once, each its own ``Act`` (the played location or an adjacent one; the others cross an
action icon there or a filled bonus action) or ``TakeBonus``; answers stay secret until the last one, then they
resolve clockwise from the active seat (draws from the shared decks in that order). After a guild card only the
active seat acts. Then the end of the action, automatic but for the seat's choices: caravan card 4's guild card
to keep, the draw after a card from the hand, a fountain's good or upgrade; the display refilled; ruby cards tucked
at the letters where a ruby was taken; the caravan card used goes under its deck; the next turn, or the end. Solo:
before the next turn the left card is discarded and used as an opponent would, and that use has its own end of the
action (the display refilled, its ruby cards tucked, its caravan card returned).

Every choice an action needs travels in one ``Act`` (``contracts.istanbul.Action``); ``legal_commands`` lists them
all and ``decide`` accepts exactly those (it checks membership in the same enumeration after the specific
refusals below).

Refusal codes (``RuleViolation.code``):
- ``no_such_seat``, ``unknown_command``, ``game_over``;
- ``not_your_turn``: the seat has no decision of this kind to take now;
- ``wrong_phase``: the command does not belong to the current step of the turn;
- ``no_such_card``: the hand or the display slot holds no such card; ``not_your_card``: a guild card not in hand;
- ``cannot_pay``: not enough lira for the guild card; ``cannot_use``: the card's or location's action cannot be
  done (its costs cannot be paid);
- ``already_answered``: the seat answered this turn; ``guild_turn``: a guild card's turn takes no bonus action;
- ``not_reachable``: the location is neither the played one nor adjacent to it; ``wrong_via``: the active seat
  uses the card freely, the others cross an icon or a bonus action; ``no_icon_left``; ``no_bonus_action``;
- ``bad_target``: the Catacombs need a target location (not themselves), other locations none;
- ``bad_choice``: the choices do not fit the action (see ``legal_commands`` for every accepted spelling);
- ``empty_deck``: drawing from an empty location deck; ``not_to_keep``; ``bad_fountain``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations, combinations_with_replacement
from typing import Any

import msgspec

from contracts.istanbul import (
    Act,
    Acted,
    Action,
    Answered,
    BonusRuby,
    BonusTaken,
    CaravanReturned,
    CaravanTurned,
    ChooseFountain,
    DeckDraw,
    DeckShuffled,
    Draw,
    FirstPlayerChosen,
    FountainRevealed,
    FountainTaken,
    GameOver,
    GoodsCardDrawn,
    GoodsDeckShuffled,
    GuildDrawn,
    GuildKept,
    GuildPlayed,
    KeepGuild,
    LocationDealt,
    LocationPlayed,
    LocationRevealed,
    LocationTaken,
    Options,
    PlayGuild,
    PlayLocation,
    RubyCardPlaced,
    SeatScore,
    SheetsPrepared,
    SoloCardDiscarded,
    TakeBonus,
    TurnStarted,
)
from contracts.table import Flow, Result
from domain.chance import Chance
from domain.istanbul import data
from domain.kernel import RuleViolation

replace = msgspec.structs.replace

SETUP, TURN, ACT, AFTER, OVER = "setup", "turn", "act", "after", "over"
GOOD_INDEX = {g: i for i, g in enumerate(data.GOODS)}
LOC_INDEX = {loc: i for i, loc in enumerate(data.LOCATIONS)}
UPG_INDEX = {loc: i for i, loc in enumerate(data.UPGRADABLE)}
LETTER_INDEX = {x: i for i, x in enumerate(data.LETTERS)}
LIRA_BOXES = sum(data.LIRA_SECTIONS)
SORTED_GOODS = tuple(sorted(data.GOODS))
SORTED_FILLS = tuple(sorted(data.FILLS))


# --- state ----------------------------------------------------------------------------------------------

class Seat(msgspec.Struct, frozen=True):
    """One seat's sheet and hands. Boxes: ``x_filled`` ever filled, ``x_crossed`` of them crossed (spent)."""

    hand: tuple[int, ...] = ()  # location cards
    guild: tuple[int, ...] = ()
    cards: tuple[str, ...] = ()  # goods cards by face, sorted
    lira: int = 0
    lira_x: int = 0
    goods: tuple[int, ...] = (0, 0, 0, 0)
    goods_x: tuple[int, ...] = (0, 0, 0, 0)
    bonus: int = 0
    bonus_x: int = 0
    bonus_boxes: int = 10
    icons: tuple[int, ...] = (0,) * len(data.LOCATIONS)  # crossed action icons per location
    upgrades: tuple[int, ...] = (0,) * len(data.UPGRADABLE)
    rubies: int = 0
    ruby_bonuses: tuple[str, ...] = ()
    first: bool = False
    answered: bool = False
    answer: Action | None = None
    took_bonus: bool = False
    keep: tuple[int, ...] = ()
    fountain: bool = False  # a fountain's choice is awaited from this seat
    guild_played: int = 0  # counters for the solo challenges
    goods_cards_played: int = 0
    palace_rubies: tuple[int, ...] = (0, 0, 0, 0)


class State(msgspec.Struct, frozen=True):
    seats: int
    options: Options
    side: str = data.SIDE_SMALL
    stage: str = SETUP
    players: tuple[Seat, ...] = ()
    location_deck: tuple[int, ...] = ()  # top first
    location_discard: tuple[int, ...] = ()
    display: tuple[int, ...] = ()  # left to right
    guild_deck: tuple[int, ...] = ()
    guild_discard: tuple[int, ...] = ()
    goods_deck: tuple[str, ...] = ()
    goods_discard: tuple[str, ...] = ()
    caravan_deck: tuple[int, ...] = ()
    caravan: int | None = None
    ruby_deck: tuple[int, ...] = ()
    palace: tuple[tuple[int, ...], ...] = ((), (), (), ())  # ruby cards at A-D, front first
    first: int | None = None
    active: int | None = None
    round: int = 0
    played: int | None = None  # the location card played (or discarded, solo) this turn
    guild_played: int | None = None
    from_hand: bool = False
    drawn: bool = False
    free_seat: int | None = None  # who uses the played card without crossing anything
    pending: tuple[int, ...] = ()  # seats whose answer is not resolved yet
    owed: tuple[int, ...] = ()  # seats owed a location card from the deck
    fountain: str | None = None
    solo_done: bool = False
    letters_taken: tuple[str, ...] = ()
    caravan_used: bool = False
    reason: str | None = None
    scores: tuple[SeatScore, ...] | None = None
    winners: tuple[int, ...] | None = None
    challenges: tuple[int, ...] = ()
    column: int | None = None


# The newest revision of these rules (``Options.rules``; a game keeps the one it was created with). 2: the second
# reading of the solo rules, 2026-11-26 (``_advance``: the display refilled after the discarded card's use, the
# discard after the turn's end of the action).
RULES = 2


def check_options(seats: int, options: Options) -> None:
    if not 1 <= options.rules <= RULES:
        raise RuleViolation("bad_options", f"rules is a revision of these rules, 1 to {RULES}, not {options.rules}")


def initial_state(seats: int, options: Options) -> State:
    return State(seats=seats, options=options, side=data.side(seats))


# --- small readers --------------------------------------------------------------------------------------

def lira(p: Seat) -> int:
    return p.lira - p.lira_x


def goods_available(p: Seat) -> tuple[int, ...]:
    return tuple(f - x for f, x in zip(p.goods, p.goods_x))


def bonus_available(p: Seat) -> int:
    return p.bonus - p.bonus_x


def icons_left(state: State, p: Seat, loc: str) -> int:
    return data.ICONS[state.side][loc] - p.icons[LOC_INDEX[loc]]


def upgradable(p: Seat) -> tuple[str, ...]:
    return tuple(loc for loc in data.UPGRADABLE if p.upgrades[UPG_INDEX[loc]] < data.UPGRADES_PER_LOCATION)


def price(state: State, letter: str) -> tuple[str, ...]:
    """The goods a ruby costs at ``letter``: the front ruby card's 4, plus the top good of each tucked card."""
    cards = state.palace[LETTER_INDEX[letter]]
    if not cards:
        return ()
    goods = list(data.RUBY_CARDS[cards[0]])
    goods += [data.RUBY_CARDS[c][0] for c in cards[1:]]
    return tuple(sorted(goods))


def location_of(card: int) -> str | None:
    return data.LOCATION_CARDS[card].location


def tiebreak(p: Seat) -> int:
    """Filled boxes not crossed (lira, goods, bonus actions) plus the goods on the goods cards in hand (T)."""
    return lira(p) + sum(goods_available(p)) + bonus_available(p) + 2 * len(p.cards)


def clockwise(state: State, start: int, seats: Sequence[int]) -> list[int]:
    return sorted(seats, key=lambda s: (s - start) % state.seats)


# --- setup ----------------------------------------------------------------------------------------------

def setup(seats: int, options: Options, chance: Chance) -> list[Any]:
    side = data.side(seats)
    events: list[Any] = [
        SheetsPrepared(
            side=side,
            thick_icons_crossed=side == data.SIDE_SMALL and seats <= 2,
            thick_bonus_crossed=seats == data.THICK_BONUS_SEATS,
        )
    ]
    for deck, cards in (
        ("ruby", range(len(data.RUBY_CARDS))),
        ("location", range(len(data.LOCATION_CARDS))),
        ("guild", [g.id for g in data.GUILD_CARDS]),
        ("caravan", sorted(data.CARAVAN_CARDS)),
    ):
        order = chance.shuffled(list(cards))
        events.append(DeckShuffled(deck=deck, order=order, size=len(order)))
    goods = chance.shuffled(data.GOODS_CARDS)
    events.append(GoodsDeckShuffled(order=goods, size=len(goods)))
    state = fold(initial_state(seats, options), events)
    for tucked in range(data.RUBY_CARDS_PER_LETTER[seats]):
        for letter in data.LETTERS:
            event = RubyCardPlaced(letter=letter, card=state.ruby_deck[0], tucked=tucked > 0)
            events.append(event)
            state = evolve(state, event)
    turned = CaravanTurned(card=state.caravan_deck[0])
    events.append(turned)
    state = evolve(state, turned)
    events.extend(_advance(state, chance))
    return events


# --- decide ---------------------------------------------------------------------------------------------

def decide(state: State, seat: int, command: Any, chance: Chance) -> list[Any]:
    if not 0 <= seat < state.seats:
        raise RuleViolation("no_such_seat", f"seats are numbered 0 to {state.seats - 1}")
    if state.stage == OVER:
        raise RuleViolation("game_over", "the game is over")
    kind = type(command)
    if kind is ChooseFountain:
        return _choose_fountain(state, seat, command, chance)
    if state.fountain is not None:
        raise RuleViolation("wrong_phase", "every seat first takes the fountain's reward")
    if kind is KeepGuild:
        return _keep(state, seat, command, chance)
    if any(p.keep for p in state.players):
        raise RuleViolation("wrong_phase", "a seat first chooses the guild card it keeps")
    if kind is PlayLocation:
        return _play_location(state, seat, command)
    if kind is PlayGuild:
        return _play_guild(state, seat, command)
    if kind is Act or kind is TakeBonus:
        return _answer(state, seat, command, chance)
    if kind is Draw:
        return _draw(state, seat, command, chance)
    raise RuleViolation("unknown_command", f"{kind.__name__} is not a command of Istanbul: Choose & Write")


def _turn(state: State, seat: int) -> None:
    if state.stage != TURN:
        raise RuleViolation("wrong_phase", "a card is played at the start of a turn")
    if seat != state.active:
        raise RuleViolation("not_your_turn", f"it is seat {state.active}'s turn")


def _play_location(state: State, seat: int, command: PlayLocation) -> list[Any]:
    _turn(state, seat)
    me = state.players[seat]
    if command.source == "hand":
        if not me.hand:
            raise RuleViolation("no_such_card", "your hand holds no location card")
        card = me.hand[0]
    else:
        slot = 0 if command.source == "left" else 1
        if slot >= len(state.display):
            raise RuleViolation("no_such_card", f"no location card lies on the {command.source}")
        card = state.display[slot]
    return [LocationPlayed(seat=seat, source=command.source, card=card)]


def _play_guild(state: State, seat: int, command: PlayGuild) -> list[Any]:
    _turn(state, seat)
    me = state.players[seat]
    if command.card not in me.guild:
        raise RuleViolation("not_your_card", f"you hold no guild card {command.card}")
    cost = data.GUILD[command.card].cost
    if lira(me) < cost:
        raise RuleViolation("cannot_pay", f"guild card {command.card} costs {cost} lira; you have {lira(me)}")
    after = replace(me, lira_x=me.lira_x + cost)
    if not _choices(state, after, data.GUILD[command.card].steps):
        raise RuleViolation("cannot_use", f"you could not do guild card {command.card}'s action after paying it")
    return [GuildPlayed(seat=seat, card=command.card, cost=cost)]


def _action(command: Act) -> Action:
    return Action(
        location=command.location,
        via=command.via,
        target=command.target,
        letter=command.letter,
        goods=command.goods,
        cards=command.cards,
        discard=command.discard,
        fill=command.fill,
        upgrades=command.upgrades,
    )


def _answer(state: State, seat: int, command: Act | TakeBonus, chance: Chance) -> list[Any]:
    if state.stage != ACT:
        raise RuleViolation("wrong_phase", "no card waits for an answer now")
    if seat not in state.pending:
        raise RuleViolation("not_your_turn", "this seat has nothing to answer now (a guild card is its player's alone)")
    me = state.players[seat]
    if me.answered:
        raise RuleViolation("already_answered", "you already answered this turn")
    if type(command) is TakeBonus:
        if state.guild_played is not None:
            raise RuleViolation("guild_turn", "the guild card is paid: use it")
        event = Answered(seat=seat, action=None, bonus=True)
    else:
        event = Answered(seat=seat, action=_check_act(state, seat, _action(command)), bonus=False)
    events: list[Any] = [event]
    after = evolve(state, event)
    if all(after.players[s].answered for s in after.pending):
        events.extend(_resolve(after, chance))
    return events


def _check_act(state: State, seat: int, action: Action) -> Action:
    me = state.players[seat]
    if state.guild_played is not None:
        if action.location is not None or action.target is not None or action.via != "free":
            raise RuleViolation("bad_choice", "a guild card's action names no location and crosses nothing")
        steps = data.GUILD[state.guild_played].steps
    else:
        played = location_of(state.played)  # type: ignore[arg-type]
        if action.location not in data.LOCATIONS or action.location not in data.reachable(played):  # type: ignore[arg-type]
            raise RuleViolation("not_reachable", f"location {action.location} is not {played} or adjacent to it")
        free = seat == state.free_seat
        if (action.via == "free") != free:
            raise RuleViolation(
                "wrong_via", "the active seat uses the card freely; the others cross an action icon or a bonus action"
            )
        if action.via == "icon" and icons_left(state, me, action.location) <= 0:
            raise RuleViolation("no_icon_left", f"every action icon of location {action.location} is crossed")
        if action.via == "bonus" and bonus_available(me) <= 0:
            raise RuleViolation("no_bonus_action", "you have no filled bonus action to cross")
        if action.location == data.CATACOMBS:
            if action.target not in data.LOCATIONS or action.target == data.CATACOMBS:
                raise RuleViolation("bad_target", "the Catacombs do the action of another location: name it")
        elif action.target is not None:
            raise RuleViolation("bad_target", "only the Catacombs take a target location")
        steps = location_steps(state, me, action.target or action.location)  # type: ignore[arg-type]
    options = _choices(state, me, steps)
    if not options:
        raise RuleViolation("cannot_use", "you cannot do this action (its costs cannot be paid)")
    if _params(action) not in options:
        raise RuleViolation("bad_choice", "these choices do not fit the action; see the legal commands")
    return action


def _keep(state: State, seat: int, command: KeepGuild, chance: Chance) -> list[Any]:
    me = state.players[seat]
    if not me.keep:
        raise RuleViolation("not_your_turn", "you have no guild card to choose")
    if command.card not in me.keep:
        raise RuleViolation("not_to_keep", f"keep one of {me.keep}")
    other = [c for c in me.keep if c != command.card][0]
    event = GuildKept(seat=seat, kept=command.card, discarded=other)
    return [event] + _advance(evolve(state, event), chance)


def _draw(state: State, seat: int, command: Draw, chance: Chance) -> list[Any]:
    if state.stage != AFTER or not state.from_hand or state.drawn or state.owed:
        raise RuleViolation("wrong_phase", "a location card is drawn after playing the one in hand")
    if seat != state.active:
        raise RuleViolation("not_your_turn", f"seat {state.active} draws")
    if command.source == "deck":
        if not state.location_deck:
            raise RuleViolation("empty_deck", "the location deck is empty: take a face-up card")
        event: Any = DeckDraw(seat=seat)
    else:
        slot = 0 if command.source == "left" else 1
        if slot >= len(state.display):
            raise RuleViolation("no_such_card", f"no location card lies on the {command.source}")
        event = LocationTaken(seat=seat, slot=command.source, card=state.display[slot])
    return [event] + _advance(evolve(state, event), chance)


def _choose_fountain(state: State, seat: int, command: ChooseFountain, chance: Chance) -> list[Any]:
    me = state.players[seat]
    if state.fountain is None or not me.fountain:
        raise RuleViolation("not_your_turn", "no fountain waits for your choice")
    if state.fountain == "good":
        if command.upgrade is not None or command.good not in data.GOODS:
            raise RuleViolation("bad_fountain", f"name the good you take: one of {data.GOODS}")
    elif command.good is not None or command.upgrade not in upgradable(me):
        raise RuleViolation("bad_fountain", f"name the location you upgrade: one of {upgradable(me)}")
    run = _Run(state, chance)
    run(FountainTaken(seat=seat, reward=state.fountain, good=command.good, upgrade=command.upgrade))
    run.bonuses(seat)
    return run.events + _advance(run.state, chance)


# --- automatic steps ------------------------------------------------------------------------------------

class _Run:
    """Events emitted one by one, each folded at once into ``state``."""

    def __init__(self, state: State, chance: Chance) -> None:
        self.state = state
        self.chance = chance
        self.events: list[Any] = []

    def __call__(self, event: Any) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)

    def guild(self, seat: int, to_keep: bool = False) -> None:
        s = self.state
        if not s.guild_deck and s.guild_discard:
            order = self.chance.shuffled(s.guild_discard)
            self(DeckShuffled(deck="guild", order=order, size=len(order)))
        if self.state.guild_deck:
            self(GuildDrawn(seat=seat, card=self.state.guild_deck[0], to_keep=to_keep))

    def goods(self, seat: int) -> None:
        s = self.state
        if not s.goods_deck and s.goods_discard:
            order = self.chance.shuffled(s.goods_discard)
            self(GoodsDeckShuffled(order=order, size=len(order)))
        if self.state.goods_deck:
            self(GoodsCardDrawn(seat=seat, card=self.state.goods_deck[0]))

    def bonuses(self, seat: int) -> None:
        for event in _bonuses(self.state, seat):
            self(event)

    def fountain(self, card: int) -> None:
        reward = data.LOCATION_CARDS[card].fountain
        self(FountainRevealed(card=card, reward=reward))  # type: ignore[arg-type]
        s = self.state
        start = s.active if s.active is not None else 0
        for seat in clockwise(s, start, range(s.seats)):
            if reward == "lira":
                self(FountainTaken(seat=seat, reward=reward))
                self.bonuses(seat)
            elif reward == "goods_card":
                self.goods(seat)
            elif reward == "upgrade" and not upgradable(self.state.players[seat]):
                self(FountainTaken(seat=seat, reward=reward))

    def reveal(self) -> None:
        s = self.state
        card = s.location_deck[0]
        if data.LOCATION_CARDS[card].fountain is not None:
            self.fountain(card)
            return
        slot = "right"
        if s.seats == 1 and s.display:
            slot = data.LOCATION_CARDS[card].mark
        self(LocationRevealed(card=card, slot=slot))


def _resolve(state: State, chance: Chance) -> list[Any]:
    """Every awaited seat answered: the answers resolve clockwise from the active seat (draws in that order)."""
    run = _Run(state, chance)
    s = run.state
    start = s.active if s.free_seat is None else s.free_seat
    for seat in clockwise(s, start, s.pending):  # type: ignore[arg-type]
        me = run.state.players[seat]
        if me.took_bonus:
            run(BonusTaken(seat=seat, gained=me.bonus < me.bonus_boxes))
            continue
        action = me.answer
        assert action is not None
        steps, effect = _steps_of(run.state, me, action)
        run(Acted(seat=seat, action=action, effect=effect))
        for step in steps:
            name, n = step[0], step[1]
            if name == "guild_card":
                for _ in range(n):
                    run.guild(seat)
            elif name == "goods_card" or (name == "card_or_good" and not action.goods):
                for _ in range(n):
                    run.goods(seat)
            elif name == "guild_keep":
                left = len(run.state.guild_deck) + len(run.state.guild_discard)
                for _ in range(min(n, left)):
                    run.guild(seat, to_keep=left >= 2)
        run.bonuses(seat)
    return run.events + _advance(run.state, chance)



def _advance(state: State, chance: Chance) -> list[Any]:
    """The automatic steps, up to the next decision (or the end)."""
    run = _Run(state, chance)
    while True:
        s = run.state
        if s.stage in (OVER, TURN, ACT) or s.fountain is not None or any(p.keep for p in s.players):
            return run.events
        if s.stage == SETUP and len(s.display) < 2:
            run.reveal()
            continue
        if s.owed:
            if not s.location_deck:
                run(_game_over(s, "deck"))
                continue
            card = s.location_deck[0]
            if data.LOCATION_CARDS[card].fountain is not None:
                run.fountain(card)
            else:
                run(LocationDealt(seat=s.owed[0], card=card))
            continue
        if s.stage == SETUP:
            first = chance.below(s.seats)
            run(FirstPlayerChosen(seat=first))
            run(TurnStarted(seat=first, round=1))
            continue
        # AFTER: the end of the action
        if s.from_hand and not s.drawn:
            if not s.display and not s.location_deck:
                run(_game_over(s, "deck"))
                continue
            return run.events
        revised = s.options.rules >= 2  # revision 1: the solo discard came before the refill and the tucks
        if len(s.display) < 2 and (revised or not s.solo_done):  # solo: after the turn, and after the use
            if not s.location_deck:
                run(_game_over(s, "display"))
                continue
            run.reveal()
            continue
        if not revised and s.seats == 1 and not s.solo_done:
            run(SoloCardDiscarded(card=s.display[0]))
            return run.events
        for letter in data.LETTERS:
            if letter in s.letters_taken and run.state.ruby_deck:
                run(RubyCardPlaced(letter=letter, card=run.state.ruby_deck[0], tucked=True))
        if s.caravan_used and s.caravan is not None:
            run(CaravanReturned(card=s.caravan))
            run(CaravanTurned(card=run.state.caravan_deck[0]))
        s = run.state
        if revised and s.seats == 1 and not s.solo_done:
            # « Après chacun de vos tours »: the turn's end of the action is done; the discarded card's use, as an
            # opponent's, then has its own (refill, ruby cards, caravan card).
            run(SoloCardDiscarded(card=s.display[0], after_turn=True))
            return run.events
        last = (s.first - 1) % s.seats  # type: ignore[operator]
        if s.seats > 1 and s.active == last and any(p.rubies >= data.RUBY_TARGET for p in s.players):
            run(_game_over(s, "rubies"))
            continue
        nxt = (s.active + 1) % s.seats  # type: ignore[operator]
        run(TurnStarted(seat=nxt, round=s.round + (nxt == s.first)))


def _bonuses(state: State, seat: int) -> list[BonusRuby]:
    p = state.players[seat]
    earned = []
    total = 0
    for i, size in enumerate(data.LIRA_SECTIONS):
        total += size
        if p.lira >= total:
            earned.append(f"lira-{i + 1}")
    for depth in data.GOODS_BONUS_DEPTHS:
        if all(f >= depth for f in p.goods):
            earned.append(f"goods-{depth}")
    return [BonusRuby(seat=seat, bonus=b) for b in earned if b not in p.ruby_bonuses]


def _game_over(state: State, reason: str) -> GameOver:
    scores = tuple(SeatScore(rubies=p.rubies, tiebreak=tiebreak(p)) for p in state.players)
    best = max((s.rubies, s.tiebreak) for s in scores)
    winners = tuple(i for i, s in enumerate(scores) if (s.rubies, s.tiebreak) == best)
    challenges: tuple[int, ...] = ()
    column = None
    if state.seats == 1:
        challenges = solo_challenges(state, state.players[0])
        rubies = state.players[0].rubies
        column = min(rubies, data.SOLO_COLUMNS[-1]) if rubies >= data.SOLO_COLUMNS[0] else None
    return GameOver(reason=reason, scores=scores, winners=winners, challenges=challenges, column=column)


def solo_challenges(state: State, p: Seat) -> tuple[int, ...]:
    """The solo table's challenges this sheet meets (T; every value a minimum but challenge 1's; crossed boxes
    count: a box's fill is what counts)."""
    columns = sum(1 for f in p.goods if f >= data.GOODS_ROW)
    goods_bonus = sum(1 for b in p.ruby_bonuses if b.startswith("goods-"))
    every_icon = all(crossed >= 1 for crossed in p.icons)  # an icon crossed at each location (A-S3)
    rich = p.lira >= data.SOLO_LIRA
    met = {
        1: sum(p.upgrades) <= data.SOLO_MAX_UPGRADES,
        2: rich,
        3: rich and columns >= 1,
        4: rich and goods_bonus >= 2,
        5: rich and p.guild_played == 0,
        6: columns >= 2,
        7: goods_bonus >= 3,
        8: goods_bonus >= 3 and columns >= 1,
        9: every_icon,
        10: every_icon and columns >= 1,
        11: p.guild_played >= 4 and goods_bonus >= 1,
        12: p.goods_cards_played == 0,
        13: sum(p.palace_rubies) >= data.SOLO_PALACE_RUBIES,
        14: max(p.palace_rubies) >= data.SOLO_ONE_LETTER and p.lira >= data.SOLO_ONE_LETTER_LIRA,
    }
    return tuple(n for n, ok in met.items() if ok)


# --- effects: steps, choices, payments ------------------------------------------------------------------

def location_steps(state: State, p: Seat, loc: str) -> tuple[tuple, ...]:
    """What using ``loc`` does for ``p`` (its upgrades count). The Caravanserai: the face-up caravan card."""
    if loc in data.WAREHOUSE_GOODS:
        return (("goods_fixed", data.WAREHOUSE_YIELD[p.upgrades[UPG_INDEX[loc]]], data.WAREHOUSE_GOODS[loc]),)
    if loc == "14":
        return (("goods_choice", data.BLACK_MARKET_YIELD[p.upgrades[UPG_INDEX[loc]]]),)
    if loc == "8":
        return (("lira", data.TEA_HOUSE_YIELD[p.upgrades[UPG_INDEX[loc]]]),)
    if loc == "6":
        return data.CARAVAN_CARDS[state.caravan] if state.caravan is not None else ()  # type: ignore[return-value]
    if loc in data.LETTERS:
        return (("palace", (loc,)),)
    return data.LOCATION_STEPS[loc]


def _steps_of(state: State, p: Seat, action: Action) -> tuple[tuple[tuple, ...], str]:
    if state.guild_played is not None and action.location is None:
        return data.GUILD[state.guild_played].steps, f"guild:{state.guild_played}"
    loc = action.target or action.location
    if loc == "6":
        return location_steps(state, p, loc), f"caravan:{state.caravan}"
    return location_steps(state, p, loc), f"loc:{loc}"  # type: ignore[arg-type]


Params = tuple  # (letter, goods, cards, discard, fill, upgrades)


def _params(action: Action) -> Params:
    return (action.letter, action.goods, action.cards, action.discard, action.fill, action.upgrades)


def _coverage(need: Counter, cards: Sequence[str]) -> int:
    supply: Counter = Counter()
    for card in cards:
        for g in data.face_goods(card):
            supply[g] += 1
    return sum(min(n, supply[g]) for g, n in need.items())


def _counted(goods: tuple[str, ...]) -> dict[str, int]:
    """Each good's count in ``goods`` (a need for ``payments``, whose answer does not depend on the order)."""
    out: dict[str, int] = {}
    for g in goods:
        out[g] = out.get(g, 0) + 1
    return out


def payments(available: Sequence[int], hand: Sequence[str], need: Mapping[str, int]) -> list[tuple[str, ...]]:
    """Every way to pay ``need`` (goods by type) with goods cards from ``hand`` and filled boxes: the cards used,
    sorted. Each card used must pay at least one good (without it the rest would pay fewer); its surplus is
    lost; the boxes pay the rest. The hand's faces that pay a needed good, in sorted order, each 0 to all of its
    copies (at most one card a good needed), the goods they supply counted as they are added (the bots' searches
    ask this at every legal command: no list or Counter is built again per combination)."""
    wanted = {g: n for g, n in need.items()}
    counts: dict[str, int] = {}
    for card in hand:
        a, b = _FACE_GOODS.get(card) or data.face_goods(card)
        if a in wanted or b in wanted:
            counts[card] = counts.get(card, 0) + 1
    faces = sorted(counts)
    goods = [_FACE_GOODS.get(f) or data.face_goods(f) for f in faces]
    face_of = dict(zip(faces, goods))
    total = sum(wanted.values())
    boxes = [(n, available[GOOD_INDEX[g]], g) for g, n in wanted.items()]
    supply = dict.fromkeys((g for pair in goods for g in pair), 0)
    out: list[tuple[str, ...]] = []

    def rec(i: int, chosen: list[str]) -> None:
        if i == len(faces):
            for f in set(chosen):  # each card pays a good: removing one lowers what the cards pay
                a, b = face_of[f]
                if a == b:
                    if supply[a] - 1 > wanted.get(a, 0):
                        return
                elif supply[a] > wanted.get(a, 0) and supply[b] > wanted.get(b, 0):
                    return
            for n, boxed, g in boxes:
                if boxed < n - min(n, supply.get(g, 0)):
                    return
            out.append(tuple(chosen))
            return
        a, b = goods[i]
        face = faces[i]
        for k in range(counts[face] + 1):
            if len(chosen) + k > total:
                break
            supply[a] += k
            supply[b] += k
            rec(i + 1, chosen + [face] * k)
            supply[a] -= k
            supply[b] -= k

    rec(0, [])
    return out


_FACE_GOODS = {card: data.face_goods(card) for card in data.GOODS_CARDS}  # the two goods of each face


def _choices(state: State, p: Seat, steps: Sequence[tuple]) -> tuple[Params, ...]:
    """Every accepted spelling of the choices ``steps`` need, as ``_params`` tuples (empty: cannot be done).
    Remembered for the last state and seat asked (``_LAST``, by identity: both are frozen, and the memo holds
    them so that no other object takes their id): ``decide``'s check of an answer asks again what the legal
    commands of the same state just listed (a bot's simulations do that at every answer). It stays here (module
    state in the pure domain) because the bots cannot hold it for them: ``legal_commands`` and ``decide`` take no
    cache (the kernel's protocol), and the bots cannot skip the check either (they try commands listed in one
    determinization on another and count on its ``RuleViolation``: ``services.bots.strategies.rate``, ``best``).
    Without it, tests/bots/istanbul_record.py's games took 7% more CPU (12.85 s against 11.98, load 20-25)."""
    last = _LAST[0]
    if last[0] is state and last[1] is p:
        memo = last[2]
    else:
        memo = {}
        _LAST[0] = (state, p, memo)
    key = tuple(steps)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _spell(state, p, key)
    return found


_LAST: list[tuple[Any, Any, dict]] = [(None, None, {})]  # (state, seat's sheet, steps -> choices): ``_choices``


def _spell(state: State, p: Seat, steps: Sequence[tuple]) -> tuple[Params, ...]:
    """``_choices`` computed: the steps' spellings one step after the other."""
    partial: list[Params] = [(None, (), (), None, (), ())]  # (letter, goods, cards, discard, fill, upgrades)
    for step in steps:
        name = step[0]
        nxt: list[Params] = []
        for c in partial:
            nxt.extend(_step_choices(state, p, step, name, c))
        partial = nxt
        if not partial:
            return ()
    return tuple(partial)


def _hand_left(p: Seat, c: Params) -> list[str]:
    hand = list(p.cards)
    if c[3] is not None:
        hand.remove(c[3])
    return hand


def _step_choices(state: State, p: Seat, step: tuple, name: str, c: Params) -> list[Params]:
    """The spellings of ``step`` after ``c``'s (a ``_params`` tuple: letter, goods, cards, discard, fill,
    upgrades), in the order the legal commands list them."""
    n = step[1]
    letter, goods, cards_, discard, fill, upgrades = c
    if name in ("lira", "ruby", "goods_card", "guild_card", "goods_fixed", "guild_keep"):
        return [c]
    if name == "goods_choice":
        return [(letter, m, cards_, discard, fill, upgrades) for m in combinations_with_replacement(SORTED_GOODS, n)]
    if name == "goods_same":
        return [(letter, (g,) * n, cards_, discard, fill, upgrades) for g in SORTED_GOODS]
    if name == "goods_different":
        return [(letter, m, cards_, discard, fill, upgrades) for m in combinations(SORTED_GOODS, n)]
    if name == "fill":
        return [(letter, goods, cards_, discard, m, upgrades)
                for m in combinations_with_replacement(SORTED_FILLS, n)]
    if name == "upgrade":
        free = upgradable(p)
        return [(letter, goods, cards_, discard, fill, (loc,)) for loc in sorted(free)] if free else [c]
    if name == "upgrade_upto":
        out = []
        for k in range(1, n + 1):
            for m in combinations_with_replacement(sorted(data.UPGRADABLE), k):
                if all(p.upgrades[UPG_INDEX[loc]] + m.count(loc) <= data.UPGRADES_PER_LOCATION for loc in m):
                    out.append((letter, goods, cards_, discard, fill, m))
        return out
    if name == "upgrade_or_fill":
        return [(letter, goods, cards_, discard, fill, (loc,)) for loc in sorted(upgradable(p))] + [
            (letter, goods, cards_, discard, (f,), upgrades) for f in SORTED_FILLS
        ]
    if name == "card_or_good":
        return [c] + [(letter, (g,), cards_, discard, fill, upgrades) for g in SORTED_GOODS]
    if name == "spend_lira":
        return [c] if lira(p) >= n else []
    if name == "discard_goods_card":
        return [(letter, goods, cards_, card, fill, upgrades) for card in sorted(set(p.cards))]
    avail = goods_available(p)
    if name == "palace":
        out = []
        for at in n:
            cost = price(state, at)
            if not cost:
                continue
            for paid in payments(avail, _hand_left(p, c), Counter(cost)):
                out.append((at if len(n) > 1 else None, goods, paid, discard, fill, upgrades))
        return out
    if name == "spend_same":
        hand = _hand_left(p, c)
        return [
            (letter, (g,), paid, discard, fill, upgrades)
            for g in SORTED_GOODS
            for paid in payments(avail, hand, {g: n})
        ]
    if name == "spend_goods_choice":
        hand = _hand_left(p, c)
        return [
            (letter, m, paid, discard, fill, upgrades)
            for m in combinations_with_replacement(SORTED_GOODS, n)
            for paid in payments(avail, hand, _counted(m))
        ]
    raise ValueError(f"unknown step {step!r}")


def _palace_letter(step: tuple, action: Action) -> str:
    letters = step[1]
    return letters[0] if len(letters) == 1 else action.letter  # type: ignore[return-value]


def _spend(p: Seat, need: Counter, cards: Sequence[str]) -> Seat:
    supply: Counter = Counter()
    hand = list(p.cards)
    for card in cards:
        hand.remove(card)
        for g in data.face_goods(card):
            supply[g] += 1
    crossed = list(p.goods_x)
    for g, n in need.items():
        crossed[GOOD_INDEX[g]] += n - min(n, supply[g])
    return replace(p, cards=tuple(hand), goods_x=tuple(crossed), goods_cards_played=p.goods_cards_played + len(cards))


def _gain_goods(p: Seat, goods: Sequence[str]) -> Seat:
    filled = list(p.goods)
    for g in goods:
        i = GOOD_INDEX[g]
        filled[i] = min(data.GOODS_ROW, filled[i] + 1)  # a good with no empty box left is lost
    return replace(p, goods=tuple(filled))


def _gain_lira(p: Seat, n: int) -> Seat:
    return replace(p, lira=min(LIRA_BOXES, p.lira + n))


def _fill(p: Seat, what: str) -> Seat:
    if what == "lira":
        return _gain_lira(p, 1)
    if what == "bonus":
        return replace(p, bonus=min(p.bonus_boxes, p.bonus + 1))
    return _gain_goods(p, (what,))


def _upgrade(p: Seat, locs: Sequence[str]) -> Seat:
    ups = list(p.upgrades)
    for loc in locs:
        ups[UPG_INDEX[loc]] = min(data.UPGRADES_PER_LOCATION, ups[UPG_INDEX[loc]] + 1)
    return replace(p, upgrades=tuple(ups))


def _apply(state: State, p: Seat, steps: Sequence[tuple], action: Action) -> tuple[Seat, tuple[str, ...], tuple[str, ...]]:
    """The seat after the action (draws aside: they are their own events), the goods cards it discarded and the
    palace letters where it took a ruby."""
    used: list[str] = []
    letters: list[str] = []
    if action.discard is not None:
        hand = list(p.cards)
        hand.remove(action.discard)
        p = replace(p, cards=tuple(hand), goods_cards_played=p.goods_cards_played + 1)
        used.append(action.discard)
    for step in steps:
        name, n = step[0], step[1]
        if name == "lira":
            p = _gain_lira(p, n)
        elif name == "ruby":
            p = replace(p, rubies=p.rubies + n)
        elif name == "goods_fixed":
            p = _gain_goods(p, (step[2],) * n)
        elif name in ("goods_choice", "goods_same", "goods_different", "card_or_good"):
            p = _gain_goods(p, action.goods)
        elif name == "fill":
            for what in action.fill:
                p = _fill(p, what)
        elif name in ("upgrade", "upgrade_upto"):
            p = _upgrade(p, action.upgrades)
        elif name == "upgrade_or_fill":
            p = _upgrade(p, action.upgrades)
            for what in action.fill:
                p = _fill(p, what)
        elif name == "spend_lira":
            p = replace(p, lira_x=p.lira_x + n)
        elif name == "palace":
            letter = _palace_letter(step, action)
            p = _spend(p, Counter(price(state, letter)), action.cards)
            used.extend(action.cards)
            rubies = list(p.palace_rubies)
            rubies[LETTER_INDEX[letter]] += 1
            p = replace(p, rubies=p.rubies + 1, palace_rubies=tuple(rubies))
            letters.append(letter)
        elif name == "spend_same":
            p = _spend(p, Counter({action.goods[0]: n}), action.cards)
            used.extend(action.cards)
        elif name == "spend_goods_choice":
            p = _spend(p, Counter(action.goods), action.cards)
            used.extend(action.cards)
    return p, tuple(used), tuple(letters)


# --- evolve ---------------------------------------------------------------------------------------------

def _with(state: State, seat: int, player: Seat) -> State:
    return replace(state, players=state.players[:seat] + (player,) + state.players[seat + 1:])


def _without(values: tuple, value: Any) -> tuple:
    i = values.index(value)
    return values[:i] + values[i + 1:]


def evolve(state: State, event: Any) -> State:
    kind = type(event)
    if kind is Answered:
        p = state.players[event.seat]
        return _with(state, event.seat, replace(p, answered=True, answer=event.action, took_bonus=bool(event.bonus)))
    if kind is Acted:
        p = state.players[event.seat]
        action = event.action
        steps, effect = _steps_of(state, p, action)
        if action.via == "icon":
            icons = list(p.icons)
            icons[LOC_INDEX[action.location]] += 1  # type: ignore[index]
            p = replace(p, icons=tuple(icons))
        elif action.via == "bonus":
            p = replace(p, bonus_x=p.bonus_x + 1)
        p, used, letters = _apply(state, p, steps, action)
        p = replace(p, answered=False, answer=None, took_bonus=False)
        state = _with(state, event.seat, p)
        taken = state.letters_taken + tuple(x for x in letters if x not in state.letters_taken)
        state = replace(
            state,
            goods_discard=state.goods_discard + used,
            letters_taken=taken,
            caravan_used=state.caravan_used or effect.startswith("caravan:"),
        )
        return _resolved(state, event.seat)
    if kind is BonusTaken:
        p = state.players[event.seat]
        bonus = p.bonus + 1 if event.gained else p.bonus
        state = _with(state, event.seat, replace(p, bonus=bonus, answered=False, answer=None, took_bonus=False))
        return _resolved(state, event.seat)
    if kind is GuildDrawn:
        p = state.players[event.seat]
        card = state.guild_deck[0]
        p = replace(p, keep=p.keep + (card,)) if event.to_keep else replace(p, guild=p.guild + (card,))
        return replace(_with(state, event.seat, p), guild_deck=state.guild_deck[1:])
    if kind is GoodsCardDrawn:
        p = state.players[event.seat]
        card = state.goods_deck[0]
        p = replace(p, cards=tuple(sorted(p.cards + (card,))))
        return replace(_with(state, event.seat, p), goods_deck=state.goods_deck[1:])
    if kind is BonusRuby:
        p = state.players[event.seat]
        p = replace(p, rubies=p.rubies + 1, ruby_bonuses=p.ruby_bonuses + (event.bonus,))
        return _with(state, event.seat, p)
    if kind is LocationPlayed:
        seat = event.seat
        if event.source == "hand":
            p = state.players[seat]
            state = _with(state, seat, replace(p, hand=_without(p.hand, event.card)))
        else:
            state = replace(state, display=_without(state.display, event.card))
        return replace(
            state,
            stage=ACT,
            played=event.card,
            from_hand=event.source == "hand",
            free_seat=seat,
            pending=tuple(range(state.seats)),
            location_discard=state.location_discard + (event.card,),
        )
    if kind is GuildPlayed:
        p = state.players[event.seat]
        p = replace(p, guild=_without(p.guild, event.card), lira_x=p.lira_x + event.cost,
                    guild_played=p.guild_played + 1)
        state = _with(state, event.seat, p)
        return replace(
            state,
            stage=ACT,
            guild_played=event.card,
            free_seat=event.seat,
            pending=(event.seat,),
            guild_discard=state.guild_discard + (event.card,),
        )
    if kind is TurnStarted:
        return replace(
            state,
            stage=TURN,
            active=event.seat,
            round=event.round,
            played=None,
            guild_played=None,
            from_hand=False,
            drawn=False,
            free_seat=None,
            pending=(),
            solo_done=False,
            letters_taken=(),
            caravan_used=False,
        )
    if kind is LocationRevealed:
        card = state.location_deck[0]
        display = (card,) + state.display if event.slot == "left" else state.display + (card,)
        return replace(state, location_deck=state.location_deck[1:], display=display)
    if kind is LocationDealt:
        card = state.location_deck[0]
        p = state.players[event.seat]
        state = _with(state, event.seat, replace(p, hand=p.hand + (card,)))
        return replace(state, location_deck=state.location_deck[1:], owed=state.owed[1:])
    if kind is DeckDraw:
        return replace(state, drawn=True, owed=state.owed + (event.seat,))
    if kind is LocationTaken:
        p = state.players[event.seat]
        state = _with(state, event.seat, replace(p, hand=p.hand + (event.card,)))
        return replace(state, display=_without(state.display, event.card), drawn=True)
    if kind is FountainRevealed:
        players = state.players
        if event.reward in ("good", "upgrade"):
            players = tuple(
                replace(p, fountain=event.reward == "good" or bool(upgradable(p))) for p in players
            )
        fountain = event.reward if any(p.fountain for p in players) else None
        return replace(
            state,
            players=players,
            fountain=fountain,
            location_deck=state.location_deck[1:],
            location_discard=state.location_discard + (event.card,),
        )
    if kind is FountainTaken:
        p = state.players[event.seat]
        if event.reward == "lira":
            p = _gain_lira(p, 1)
        elif event.good is not None:
            p = _gain_goods(p, (event.good,))
        elif event.upgrade is not None:
            p = _upgrade(p, (event.upgrade,))
        state = _with(state, event.seat, replace(p, fountain=False))
        if state.fountain is not None and not any(x.fountain for x in state.players):
            state = replace(state, fountain=None)
        return state
    if kind is GuildKept:
        p = state.players[event.seat]
        p = replace(p, keep=(), guild=p.guild + (event.kept,))  # type: ignore[operator]
        state = _with(state, event.seat, p)
        return replace(state, guild_discard=state.guild_discard + (event.discarded,))
    if kind is SoloCardDiscarded:
        if event.after_turn:  # the turn's letters and caravan card were settled before the discard
            state = replace(state, letters_taken=(), caravan_used=False)
        return replace(
            state,
            stage=ACT,
            display=_without(state.display, event.card),
            location_discard=state.location_discard + (event.card,),
            played=event.card,
            guild_played=None,
            free_seat=None,
            pending=(0,),
            solo_done=True,
        )
    if kind is RubyCardPlaced:
        i = LETTER_INDEX[event.letter]
        palace = state.palace[:i] + (state.palace[i] + (event.card,),) + state.palace[i + 1:]
        return replace(state, palace=palace, ruby_deck=state.ruby_deck[1:])
    if kind is CaravanTurned:
        return replace(state, caravan=event.card, caravan_deck=state.caravan_deck[1:])
    if kind is CaravanReturned:
        return replace(state, caravan=None, caravan_deck=state.caravan_deck + (event.card,))
    if kind is DeckShuffled:
        order = event.order or ()
        if event.deck == "location":
            return replace(state, location_deck=order)
        if event.deck == "guild":
            return replace(state, guild_deck=order, guild_discard=())
        if event.deck == "caravan":
            return replace(state, caravan_deck=order)
        return replace(state, ruby_deck=order)
    if kind is GoodsDeckShuffled:
        return replace(state, goods_deck=event.order or (), goods_discard=())
    if kind is FirstPlayerChosen:
        p = state.players[event.seat]
        return replace(_with(state, event.seat, replace(p, first=True)), first=event.seat)
    if kind is SheetsPrepared:
        icons = tuple(
            1 if event.thick_icons_crossed and loc in data.THICK_ICONS else 0 for loc in data.LOCATIONS
        )
        boxes = data.BONUS_ACTIONS[event.side] - (1 if event.thick_bonus_crossed else 0)
        players = tuple(Seat(icons=icons, bonus_boxes=boxes) for _ in range(state.seats))
        return replace(state, side=event.side, players=players, owed=tuple(range(state.seats)))
    if kind is GameOver:
        return replace(
            state,
            stage=OVER,
            reason=event.reason,
            scores=event.scores,
            winners=event.winners,
            challenges=event.challenges,
            column=event.column,
        )
    raise ValueError(f"not an Istanbul event: {event!r}")


def _resolved(state: State, seat: int) -> State:
    pending = _without(state.pending, seat)
    return replace(state, pending=pending, stage=AFTER if not pending else state.stage)


def fold(state: State, events: Sequence[Any]) -> State:
    for event in events:
        state = evolve(state, event)
    return state


# --- flow and legal commands ----------------------------------------------------------------------------

def awaiting(state: State) -> tuple[int, ...]:
    if state.stage == OVER:
        return ()
    if state.fountain is not None:
        return tuple(i for i, p in enumerate(state.players) if p.fountain)
    keeping = tuple(i for i, p in enumerate(state.players) if p.keep)
    if keeping:
        return keeping
    if state.stage == TURN:
        return (state.active,)  # type: ignore[return-value]
    if state.stage == ACT:
        return tuple(s for s in state.pending if not state.players[s].answered)
    if state.stage == AFTER and state.from_hand and not state.drawn and not state.owed:
        return (state.active,)  # type: ignore[return-value]
    return ()


def phase(state: State) -> str:
    if state.stage in (OVER, TURN, SETUP) and state.fountain is None:
        return state.stage
    if state.fountain is not None:
        return "fountain"
    if any(p.keep for p in state.players):
        return "keep"
    if state.stage == ACT:
        return "solo" if state.free_seat is None else "act"
    return "draw" if state.from_hand and not state.drawn else state.stage


def flow(state: State) -> Flow:
    return Flow(phase=phase(state), awaiting=awaiting(state), round=state.round, turn_seat=state.active)


def legal_commands(state: State, seat: int) -> list[Any]:
    if not 0 <= seat < state.seats or seat not in awaiting(state):
        return []
    me = state.players[seat]
    if state.fountain is not None:
        if state.fountain == "good":
            return [ChooseFountain(good=g) for g in data.GOODS]
        return [ChooseFountain(upgrade=loc) for loc in upgradable(me)]
    if me.keep:
        return [KeepGuild(card=c) for c in me.keep]
    if state.stage == TURN:
        out: list[Any] = []
        if me.hand:
            out.append(PlayLocation(source="hand"))
        out.extend(PlayLocation(source=s) for s in ("left", "right")[: len(state.display)])
        for card in sorted(set(me.guild)):
            cost = data.GUILD[card].cost
            if lira(me) >= cost and _choices(state, replace(me, lira_x=me.lira_x + cost), data.GUILD[card].steps):
                out.append(PlayGuild(card=card))
        return out
    if state.stage == ACT:
        return _legal_acts(state, seat, me)
    if state.stage == AFTER:
        out = [Draw(source=s) for s in ("left", "right")[: len(state.display)]]
        if state.location_deck:
            out.append(Draw(source="deck"))
        return out
    return []


def _acts(location: str | None, via: str, target: str | None, options: list[Params]) -> list[Act]:
    return [
        Act(location=location, via=via, target=target, letter=o[0], goods=o[1], cards=o[2], discard=o[3],
            fill=o[4], upgrades=o[5])  # type: ignore[arg-type]
        for o in options
    ]


def _legal_acts(state: State, seat: int, me: Seat) -> list[Any]:
    if state.guild_played is not None:
        return _acts(None, "free", None, _choices(state, me, data.GUILD[state.guild_played].steps))
    out: list[Any] = []
    free = seat == state.free_seat
    for loc in data.reachable(location_of(state.played)):  # type: ignore[arg-type]
        vias = ["free"] if free else [
            v for v, ok in (("icon", icons_left(state, me, loc) > 0), ("bonus", bonus_available(me) > 0)) if ok
        ]
        if not vias:
            continue
        targets = [None] if loc != data.CATACOMBS else [t for t in data.LOCATIONS if t != data.CATACOMBS]
        for target in targets:
            options = _choices(state, me, location_steps(state, me, target or loc))
            for via in vias:
                out.extend(_acts(loc, via, target, options))
    out.append(TakeBonus())
    return out


def scores(state: State) -> tuple[int, ...]:
    """Each seat's points now (the table's ``scores`` hook): its rubies, what the rules count at the end (the
    tie-breaks, lira then goods, decide only who wins)."""
    return tuple(p.rubies for p in state.players) if state.players else (0,) * state.seats


def result(state: State) -> Result | None:
    if state.stage != OVER or state.scores is None:
        return None
    details: dict[str, Any] = {"reason": state.reason, "seats": msgspec.to_builtins(state.scores)}
    if state.seats == 1:
        details["challenges"] = list(state.challenges)
        details["column"] = state.column
    return Result(scores=tuple(s.rubies for s in state.scores), winners=state.winners or (), details=details)
