"""Le marché de Samarkand: state, setup, decide, evolve, legal commands, flow and result.

Reads top to bottom: state, setup, decide (one function per command), the automatic consequences (closing a
value of the countdown, ending a round, scoring), the real-time countdown's timer (``timer``, ``tick``), evolve,
legal commands and flow, scoring helpers.

Two countdowns (``Options.countdown_mode``; docs/rules-decisions.md, Samarkand). Stepwise: every eligible seat
answers (pass or stop) at each value and the value closes when all have answered. Real time: the value shows for
``countdown_interval_ms``; a seat may stop while it shows (it never passes); the value closes when its time runs
out (the platform's ``Tick`` calls ``tick``) or at once when every eligible seat has stopped, and the stops of one
value are settled together exactly as the stepwise mode settles simultaneous stops (``_close_value``).

Refusal codes (``RuleViolation.code``):
- ``no_such_seat``: the seat is not at this table.
- ``unknown_command``: not a Samarkand command.
- ``game_over``: the game is over.
- ``wrong_phase``: the command does not belong to the current phase (choosing, countdown, scoring).
- ``already_chosen``: the seat already put a card face down this round (or already chose its least-bought type).
- ``not_your_card``: the chosen value is not in the seat's hand.
- ``nothing_to_buy``: the market holds nothing the seat could buy, so it does not answer the countdown.
- ``already_answered``: the seat already answered at this value of the countdown (in real time: already stopped).
- ``no_pass_in_realtime``: a ``Pass`` in the real-time countdown, where a seat that does not stop lets the value run
  out.
- ``not_due``: a ``tick`` whose key is not the running timer's (the value it names is no longer shown).
- ``no_such_target``: the stop designates no seller of this table.
- ``own_goods``: a seat cannot buy its own goods.
- ``not_on_market``: the designated card is not (or no longer) on the market.
- ``no_camel_left``: the camel pile is exhausted; camels can no longer be bought.
- ``within_capacity``: a discard while the camels can carry every goods card.
- ``not_your_goods``: a discard of a goods card the seat does not hold.
- ``discard_first``: the least-bought choice comes after the discards.
- ``no_tie``: the seat has no tie to settle for the least-bought type.
- ``not_least_bought``: the chosen type is not one of the tied least-bought types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from contracts.samarkand import (
    Answered,
    BankCardTurned,
    BankDeckShuffled,
    CamelBought,
    CamelDeckShuffled,
    CamelDisputed,
    CamelTurned,
    CardChosen,
    CardsRevealed,
    ChooseCard,
    ChooseLeastBought,
    DiscardGoods,
    GameScored,
    Goods,
    GoodsBought,
    GoodsDiscarded,
    GoodsDisputed,
    LeastBoughtChosen,
    MarketSetUp,
    Options,
    Pass,
    RoundEnded,
    RoundStarted,
    ScoringStarted,
    SeatScore,
    Stop,
    StopCall,
    StopFined,
    Target,
    ValueClosed,
)
from contracts.table import Flow, Result
from domain.chance import Chance
from domain.kernel import RuleViolation
from domain.samarkand import data

replace = msgspec.structs.replace

SETUP, CHOOSING, COUNTDOWN, BETWEEN, SCORING, OVER = "setup", "choosing", "countdown", "between", "scoring", "over"
REALTIME = "realtime"


# --- state ----------------------------------------------------------------------------------------------

class SeatState(msgspec.Struct, frozen=True):
    sells: str
    hand: tuple[int, ...] = ()  # values, sorted; the chosen card stays here until the reveal
    money: int = 0
    camels: tuple[int, ...] = ()
    goods: tuple[Goods, ...] = ()  # bought, in order of purchase (minus the ones discarded at scoring)
    chosen: int | None = None  # face down, before the reveal
    offer: int | None = None  # revealed and still on the market
    answered: bool = False  # at the current value of the countdown
    stop: Target | None = None  # its stop at the current value (None: passed or not answered)
    discarded: tuple[Goods, ...] = ()  # left behind at scoring
    least_bought: str | None = None  # chosen at scoring, on a tie


class State(msgspec.Struct, frozen=True):
    seats: int
    options: Options
    phase: str = SETUP
    round: int = 0
    dean: int = 0
    value: int = 0  # the countdown's current value
    players: tuple[SeatState, ...] = ()
    bank_goods: str | None = None
    bank_pile: tuple[int, ...] = ()  # top first
    bank_offer: int | None = None
    camel_pile: tuple[int, ...] = ()  # top first
    camel_up: int | None = None
    discard: tuple[Goods, ...] = ()  # goods out of the game: unsold at 0, lost in a dispute
    issued: int = 0  # money the bank handed out at setup
    bank_in: int = 0  # money paid to the bank since (camels, the bank's goods, fines)
    scores: tuple[int, ...] | None = None
    winners: tuple[int, ...] | None = None
    details: tuple[SeatScore, ...] | None = None


def initial_state(seats: int, options: Options) -> State:
    return State(seats=seats, options=options)


def check_options(seats: int, options: Options) -> None:
    if options.countdown_mode == REALTIME and options.hidden_goods:
        raise RuleViolation(
            "option_unsupported",
            "the hidden-goods variant cannot be played in real time: who stops is seen as it happens (the seats"
            " still awaited at a value), which would name the buyers the variant hides; use 'stepwise'",
        )
    low, high = data.COUNTDOWN_INTERVAL_MS
    if not low <= options.countdown_interval_ms <= high:
        raise RuleViolation("bad_options", f"countdown_interval_ms must be between {low} and {high}")


# --- setup ----------------------------------------------------------------------------------------------

def setup(seats: int, options: Options, chance: Chance) -> list[Any]:
    kinds = chance.shuffled(data.GOODS)
    bank_goods = kinds[seats] if seats in data.BANK_SELLS else None
    dean = chance.below(seats)
    camels = chance.shuffled(data.CAMELS)
    events: list[Any] = [
        MarketSetUp(
            goods=tuple(kinds[:seats]),
            bank_goods=bank_goods,
            hand=data.GOODS_VALUES,
            money=data.START_MONEY[seats],
            dean=dean,
        ),
        CamelDeckShuffled(order=camels, size=len(camels)),
    ]
    if bank_goods is not None:
        pile = chance.shuffled(data.GOODS_VALUES)
        events.append(BankDeckShuffled(order=pile, size=len(pile)))
    state = fold(initial_state(seats, options), events)
    events.extend(_start_round(state, 1, dean))
    return events


# --- decide ---------------------------------------------------------------------------------------------

def decide(state: State, seat: int, command: Any, chance: Chance) -> list[Any]:
    if not 0 <= seat < state.seats:
        raise RuleViolation("no_such_seat", f"seats are numbered 0 to {state.seats - 1}")
    if state.phase == OVER:
        raise RuleViolation("game_over", "the game is over")
    kind = type(command)
    if kind is Pass or kind is Stop:
        return _answer(state, seat, command, chance)
    if kind is ChooseCard:
        return _choose(state, seat, command)
    if kind is DiscardGoods:
        return _discard(state, seat, command)
    if kind is ChooseLeastBought:
        return _choose_least_bought(state, seat, command)
    raise RuleViolation("unknown_command", f"{kind.__name__} is not a command of Le marché de Samarkand")


def _phase(state: State, phase: str, what: str) -> None:
    if state.phase != phase:
        raise RuleViolation("wrong_phase", f"{what} belongs to the {phase} phase; the game is in {state.phase}")


def _choose(state: State, seat: int, command: ChooseCard) -> list[Any]:
    _phase(state, CHOOSING, "choosing a card to sell")
    me = state.players[seat]
    if me.chosen is not None:
        raise RuleViolation("already_chosen", "you already put a card face down this round")
    if command.value not in me.hand:
        raise RuleViolation("not_your_card", f"you hold no card of value {command.value}")
    events: list[Any] = [CardChosen(seat=seat, value=command.value)]
    if all(p.chosen is not None for i, p in enumerate(state.players) if i != seat):
        values = tuple(command.value if i == seat else p.chosen for i, p in enumerate(state.players))
        events.append(CardsRevealed(values=values, start=data.COUNTDOWN_FROM))  # type: ignore[arg-type]
    return events


def _answer(state: State, seat: int, command: Pass | Stop, chance: Chance) -> list[Any]:
    _phase(state, COUNTDOWN, "answering the countdown")
    targets = market_targets(state, seat)
    if not targets:
        raise RuleViolation("nothing_to_buy", "the market holds nothing you may buy")
    realtime = state.options.countdown_mode == REALTIME
    if realtime and type(command) is Pass:
        raise RuleViolation("no_pass_in_realtime", "in the real-time countdown nobody passes: stop, or let the"
                            f" value {state.value} run out")
    if state.players[seat].answered:
        raise RuleViolation("already_answered", f"you already {'stopped' if realtime else 'answered'} at {state.value}")
    if type(command) is Stop:
        target = command.target
        _check_target(state, seat, target)
        event = Answered(seat=seat, value=state.value, stop=True, target=target)
    else:
        event = Answered(seat=seat, value=state.value, stop=False)
    events: list[Any] = [event]
    waiting = [s for s in awaiting(state) if s != seat]
    if not waiting:  # real time too: once every eligible seat has stopped, nothing is left to wait for
        after = evolve(state, event)
        events.extend(_close_value(after, chance))
    return events


def _check_target(state: State, seat: int, target: Target) -> None:
    if target == "camel":
        if state.camel_up is None:
            if not state.camel_pile:
                raise RuleViolation("no_camel_left", "the camel pile is exhausted: no more camels to buy")
            raise RuleViolation("not_on_market", "no camel is face up now; the next is turned next round")
        return
    if target == "bank":
        if state.bank_offer is None:
            raise RuleViolation("not_on_market", "the bank has no goods card on the market")
        return
    if type(target) is not int or not 0 <= target < state.seats:
        raise RuleViolation("no_such_target", f"sellers are seats 0 to {state.seats - 1}, 'bank' or 'camel'")
    if target == seat:
        raise RuleViolation("own_goods", "you cannot buy your own goods")
    if state.players[target].offer is None:
        raise RuleViolation("not_on_market", f"seat {target}'s card is no longer on the market")


def _discard(state: State, seat: int, command: DiscardGoods) -> list[Any]:
    _phase(state, SCORING, "discarding goods")
    me = state.players[seat]
    if not over_capacity(me):
        raise RuleViolation("within_capacity", "your camels can carry every goods card you hold")
    if Goods(command.kind, command.value) not in me.goods:
        raise RuleViolation("not_your_goods", f"you hold no {command.kind} of value {command.value}")
    events: list[Any] = [GoodsDiscarded(seat=seat, kind=command.kind, value=command.value)]
    return events + _maybe_score(fold(state, events))


def _choose_least_bought(state: State, seat: int, command: ChooseLeastBought) -> list[Any]:
    _phase(state, SCORING, "choosing the least-bought type")
    me = state.players[seat]
    if over_capacity(me):
        raise RuleViolation("discard_first", "discard the goods your camels cannot carry first")
    if me.least_bought is not None:
        raise RuleViolation("already_chosen", "you already chose your least-bought type")
    tied = least_bought_tie(state, seat)
    if not tied:
        raise RuleViolation("no_tie", "your least-bought type is not tied: there is nothing to choose")
    if command.kind not in tied:
        raise RuleViolation("not_least_bought", f"{command.kind} is not one of your tied types {tied}")
    events: list[Any] = [LeastBoughtChosen(seat=seat, kind=command.kind)]
    return events + _maybe_score(fold(state, events))


# --- automatic consequences -----------------------------------------------------------------------------

def _target_order(target: Target) -> tuple[int, int]:
    if target == "bank":
        return (1, 0)
    if target == "camel":
        return (2, 0)
    return (0, target)  # type: ignore[return-value]


def _close_value(state: State, chance: Chance) -> list[Any]:
    """Every eligible seat answered at ``state.value`` (in real time: stopped, or the value's time ran out):
    reveal the stops and settle them all at once."""
    value = state.value
    stops = tuple(StopCall(seat=i, target=p.stop) for i, p in enumerate(state.players) if p.stop is not None)
    events: list[Any] = [ValueClosed(value=value, stops=stops, hidden_goods=state.options.hidden_goods)]
    money = tuple(p.money for p in state.players)  # simultaneous: what each could pay before any settlement
    claims: dict[Any, list[int]] = {}
    for call in stops:
        claims.setdefault(call.target, []).append(call.seat)
    for target in sorted(claims, key=_target_order):
        events.extend(_settle(state, target, claims[target], money, value, chance))
    if state.options.hidden_goods:
        events = _fines_last(events, chance)
    after = fold(state, events)
    if after.camel_up is None and after.camel_pile and _goods_on_market(after):
        turned = CamelTurned(capacity=after.camel_pile[0])
        events.append(turned)
        after = evolve(after, turned)
    if after.value < data.COUNTDOWN_TO or not any(market_targets(after, s) for s in range(after.seats)):
        events.extend(_end_round(after))
    return events


# --- the real-time countdown's timer (the table's game-timer hooks: design-19.md, "Game timers") ------------

def timer(state: State) -> tuple[str, float] | None:
    """The running timer of the real-time countdown: its key names the value shown (``"round:value"``: a value
    is shown once a round, and no undo goes back over its close, so a key never comes back) and it lasts
    ``countdown_interval_ms``. None in the stepwise mode and outside the countdown (the choice and the scoring
    are not timed by the rules: the table's clocks, if any, pace them)."""
    if state.phase != COUNTDOWN or state.options.countdown_mode != REALTIME:
        return None
    return timer_key(state), state.options.countdown_interval_ms / 1000


def timer_key(state: State) -> str:
    return f"{state.round}:{state.value}"


def tick(state: State, key: str, chance: Chance) -> list[Any]:
    """The value ``key`` names ran out: the stops received while it was shown are settled together (as the
    stepwise mode settles the stops of one value), then the next value is shown; after 1 the round ends."""
    if timer(state) is None or key != timer_key(state):
        raise RuleViolation("not_due", f"the timer {key!r} is not running: the value it named is no longer shown")
    return _close_value(state, chance)


def _fines_last(events: list[Any], chance: Chance) -> list[Any]:
    """The hidden-goods variant, where a fine names its seat to that seat only: the fines of a value come after
    its purchases and disputes, in an order drawn by chance, so that where a fine stands tells no reader whose
    it is nor on which card (in seat or target order, a seat would learn whether the other fined disputant sits
    before or after it, and everyone that a fine before the first seller's purchase was the dean's)."""
    fines = [e for e in events if type(e) is StopFined]
    return [e for e in events if type(e) is not StopFined] + list(chance.shuffled(fines))  # 0 or 1: no draw


def _settle(state: State, target: Target, claimants: list[int], money: tuple[int, ...], value: int,
            chance: Chance) -> list[Any]:
    """The stops of several seats (or one) on one target at one value.

    One claimant buys at the called price, or is fined if it cannot pay. Several claimants are a dispute
    (« si plusieurs joueurs désignent la même carte, il y a dispute »): the dean, if among them, takes the card at
    the called price and the others pay nothing; otherwise the card is discarded (a camel goes back into its
    pile, shuffled) and each disputant pays half the price rounded up, or the fine if it cannot pay that. A dean
    who cannot pay the card he is given is fined, and the others settle without him."""
    hidden = state.options.hidden_goods

    def fine(s: int) -> StopFined:
        return StopFined(seat=s, target=target, price=value, amount=min(data.STOP_FINE, money[s]), hidden_goods=hidden)

    if len(claimants) > 1 and state.dean in claimants and money[state.dean] < value:
        others = [s for s in claimants if s != state.dean]
        return [fine(state.dean), *_settle(state, target, others, money, value, chance)]
    if len(claimants) == 1 or state.dean in claimants:
        buyer = claimants[0] if len(claimants) == 1 else state.dean
        if money[buyer] < value:
            return [fine(buyer)]
        return [_bought(state, target, buyer, value, tuple(claimants) if len(claimants) > 1 else ())]
    payment = data.dispute_payment(value)
    events: list[Any] = [fine(s) for s in claimants if money[s] < payment]
    payers = tuple(s for s in claimants if money[s] >= payment)
    if target == "camel":
        capacity = state.camel_up
        events.append(CamelDisputed(seats=payers, capacity=capacity, price=value, payment=payment,
                                    hidden_goods=hidden))
        order = chance.shuffled(state.camel_pile + (capacity,))
        events.append(CamelDeckShuffled(order=order, size=len(order)))
    elif target == "bank":
        events.append(GoodsDisputed(seats=payers, seller=None, kind=state.bank_goods, value=state.bank_offer,
                                    price=value, payment=payment, hidden_goods=hidden))
    else:
        seller = state.players[target]
        events.append(GoodsDisputed(seats=payers, seller=target, kind=seller.sells, value=seller.offer,
                                    price=value, payment=payment, hidden_goods=hidden))
    return events


def _bought(state: State, target: Target, buyer: int, value: int, disputants: tuple[int, ...]) -> Any:
    hidden = state.options.hidden_goods
    if target == "camel":
        return CamelBought(buyer=buyer, capacity=state.camel_up, price=value, disputants=disputants,
                           hidden_goods=hidden)
    if target == "bank":
        return GoodsBought(buyer=buyer, seller=None, kind=state.bank_goods, value=state.bank_offer, price=value,
                           disputants=disputants, hidden_goods=hidden)
    seller = state.players[target]
    return GoodsBought(buyer=buyer, seller=target, kind=seller.sells, value=seller.offer, price=value,
                       disputants=disputants, hidden_goods=hidden)


def _goods_on_market(state: State) -> bool:
    return state.bank_offer is not None or any(p.offer is not None for p in state.players)


def _start_round(state: State, number: int, dean: int) -> list[Any]:
    events: list[Any] = [RoundStarted(round=number, dean=dean)]
    if state.camel_up is None and state.camel_pile:
        events.append(CamelTurned(capacity=state.camel_pile[0]))
    if state.bank_goods is not None and state.bank_pile:
        events.append(BankCardTurned(value=state.bank_pile[0]))
    return events


def _end_round(state: State) -> list[Any]:
    unsold = tuple(Goods(p.sells, p.offer) for p in state.players if p.offer is not None)
    if state.bank_offer is not None:
        unsold += (Goods(state.bank_goods, state.bank_offer),)  # type: ignore[arg-type]
    events: list[Any] = [RoundEnded(round=state.round, discarded=unsold)]
    after = evolve(state, events[0])
    if state.round < data.ROUNDS:
        events.extend(_start_round(after, state.round + 1, (state.dean + 1) % state.seats))
        return events
    events.append(ScoringStarted())
    return events + _maybe_score(evolve(after, events[-1]))


def _maybe_score(state: State) -> list[Any]:
    if any(scoring_pending(state, s) for s in range(state.seats)):
        return []
    details = score(state)
    totals = tuple(d.total for d in details)
    best = max(totals)
    winners = tuple(i for i, t in enumerate(totals) if t == best)
    return [GameScored(scores=totals, winners=winners, details=details)]


# --- evolve ---------------------------------------------------------------------------------------------

def _with(players: tuple[SeatState, ...], seat: int, player: SeatState) -> tuple[SeatState, ...]:
    return players[:seat] + (player,) + players[seat + 1 :]


def _pay(players: tuple[SeatState, ...], seat: int, amount: int) -> tuple[SeatState, ...]:
    p = players[seat]
    return _with(players, seat, replace(p, money=p.money + amount))


def _remove_one(values: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
    i = values.index(value)
    return values[:i] + values[i + 1 :]


def _take_offer(state: State, seller: int | None) -> State:
    if seller is None:
        return replace(state, bank_offer=None)
    p = state.players[seller]
    return replace(state, players=_with(state.players, seller, replace(p, offer=None)))


def evolve(state: State, event: Any) -> State:
    kind = type(event)
    if kind is Answered:
        p = state.players[event.seat]
        stop = event.target if event.stop else None
        return replace(state, players=_with(state.players, event.seat, replace(p, answered=True, stop=stop)))
    if kind is ValueClosed:
        players = tuple(replace(p, answered=False, stop=None) if p.answered else p for p in state.players)
        return replace(state, players=players, value=event.value - 1)
    if kind is CardChosen:
        p = state.players[event.seat]
        return replace(state, players=_with(state.players, event.seat, replace(p, chosen=event.value)))
    if kind is GoodsBought:
        players = state.players
        b = players[event.buyer]
        players = _with(players, event.buyer, replace(b, money=b.money - event.price,
                                                       goods=b.goods + (Goods(event.kind, event.value),)))
        bank_in = state.bank_in
        if event.seller is None:
            bank_in += event.price
        else:
            players = _pay(players, event.seller, event.price)
        return _take_offer(replace(state, players=players, bank_in=bank_in), event.seller)
    if kind is CamelBought:
        b = state.players[event.buyer]
        buyer = replace(b, money=b.money - event.price, camels=b.camels + (event.capacity,))
        return replace(
            state,
            players=_with(state.players, event.buyer, buyer),
            camel_up=None,
            bank_in=state.bank_in + event.price,
        )
    if kind is StopFined:
        return replace(state, players=_pay(state.players, event.seat, -event.amount), bank_in=state.bank_in + event.amount)
    if kind is GoodsDisputed:
        players = state.players
        for s in event.seats:
            players = _pay(players, s, -event.payment)
        bank_in = state.bank_in
        total = event.payment * len(event.seats)
        if event.seller is None:
            bank_in += total
        else:
            players = _pay(players, event.seller, total)
        state = replace(state, players=players, bank_in=bank_in, discard=state.discard + (Goods(event.kind, event.value),))
        return _take_offer(state, event.seller)
    if kind is CamelDisputed:
        players = state.players
        for s in event.seats:
            players = _pay(players, s, -event.payment)
        return replace(  # back into its pile; the CamelDeckShuffled that follows gives the new order
            state,
            players=players,
            camel_up=None,
            camel_pile=state.camel_pile + (event.capacity,),
            bank_in=state.bank_in + event.payment * len(event.seats),
        )
    if kind is CamelTurned:
        return replace(state, camel_up=event.capacity, camel_pile=state.camel_pile[1:])
    if kind is BankCardTurned:
        return replace(state, bank_offer=event.value, bank_pile=state.bank_pile[1:])
    if kind is CardsRevealed:
        players = tuple(
            replace(p, hand=_remove_one(p.hand, v), chosen=None, offer=v, answered=False, stop=None)
            for p, v in zip(state.players, event.values)
        )
        return replace(state, players=players, phase=COUNTDOWN, value=event.start)
    if kind is RoundStarted:
        players = tuple(replace(p, chosen=None, offer=None, answered=False, stop=None) for p in state.players)
        return replace(state, players=players, phase=CHOOSING, round=event.round, dean=event.dean, value=0)
    if kind is RoundEnded:
        players = tuple(replace(p, offer=None, answered=False, stop=None) for p in state.players)
        return replace(
            state, players=players, bank_offer=None, discard=state.discard + event.discarded, phase=BETWEEN
        )
    if kind is CamelDeckShuffled:
        return replace(state, camel_pile=event.order or ())
    if kind is BankDeckShuffled:
        return replace(state, bank_pile=event.order or ())
    if kind is MarketSetUp:
        hand = tuple(sorted(event.hand))
        players = tuple(SeatState(sells=k, hand=hand, money=event.money) for k in event.goods)
        return replace(
            state,
            players=players,
            bank_goods=event.bank_goods,
            dean=event.dean,
            issued=event.money * len(players),
        )
    if kind is ScoringStarted:
        return replace(state, phase=SCORING, value=0)
    if kind is GoodsDiscarded:
        p = state.players[event.seat]
        card = Goods(event.kind, event.value)
        player = replace(p, goods=_remove_one(p.goods, card), discarded=p.discarded + (card,))
        return replace(state, players=_with(state.players, event.seat, player))
    if kind is LeastBoughtChosen:
        p = state.players[event.seat]
        return replace(state, players=_with(state.players, event.seat, replace(p, least_bought=event.kind)))
    if kind is GameScored:
        return replace(state, phase=OVER, scores=event.scores, winners=event.winners, details=event.details)
    raise ValueError(f"not a Samarkand event: {event!r}")


def fold(state: State, events: Sequence[Any]) -> State:
    for event in events:
        state = evolve(state, event)
    return state


# --- legal commands and flow ----------------------------------------------------------------------------

def market_targets(state: State, seat: int) -> list[Target]:
    """What ``seat`` may designate now: the others' revealed cards, the bank's card, the face-up camel.
    A seat with no target is not eligible: it does not answer the countdown."""
    targets: list[Target] = [i for i, p in enumerate(state.players) if i != seat and p.offer is not None]
    if state.bank_offer is not None:
        targets.append("bank")
    if state.camel_up is not None:
        targets.append("camel")
    return targets


def awaiting(state: State) -> tuple[int, ...]:
    phase = state.phase
    if phase == COUNTDOWN:
        players = state.players
        items = sum(p.offer is not None for p in players) + (state.bank_offer is not None) + (
            state.camel_up is not None
        )
        # eligible: something on the market besides its own card
        return tuple(
            i for i, p in enumerate(players) if not p.answered and items > (p.offer is not None)
        )
    if phase == CHOOSING:
        return tuple(i for i, p in enumerate(state.players) if p.chosen is None)
    if phase == SCORING:
        return tuple(i for i in range(state.seats) if scoring_pending(state, i))
    return ()


def flow(state: State) -> Flow:
    dean = state.dean if state.phase != SETUP else None
    return Flow(phase=state.phase, awaiting=awaiting(state), round=state.round, turn_seat=dean)


_PASS = Pass()


def legal_commands(state: State, seat: int) -> list[Any]:
    if not 0 <= seat < state.seats:
        return []
    phase = state.phase
    me = state.players[seat] if state.players else None
    if phase == COUNTDOWN:
        if me.answered:  # type: ignore[union-attr]
            return []
        targets = market_targets(state, seat)
        if not targets:
            return []
        stops = [Stop(target=t) for t in targets]
        return stops if state.options.countdown_mode == REALTIME else [_PASS] + stops
    if phase == CHOOSING:
        if me.chosen is not None:  # type: ignore[union-attr]
            return []
        return [ChooseCard(value=v) for v in sorted(set(me.hand))]  # type: ignore[union-attr]
    if phase == SCORING:
        if over_capacity(me):  # type: ignore[arg-type]
            cards = sorted(set(me.goods), key=lambda g: (g.kind, g.value))  # type: ignore[union-attr]
            return [DiscardGoods(kind=g.kind, value=g.value) for g in cards]
        if me.least_bought is None:  # type: ignore[union-attr]
            return [ChooseLeastBought(kind=k) for k in least_bought_tie(state, seat)]
    return []


def result(state: State) -> Result | None:
    if state.phase != OVER or state.scores is None:
        return None
    details = {"seats": msgspec.to_builtins(state.details)}
    return Result(scores=state.scores, winners=state.winners or (), details=details)


# --- scoring --------------------------------------------------------------------------------------------

def kinds_in_play(state: State) -> tuple[str, ...]:
    kinds = tuple(p.sells for p in state.players)
    return kinds + (state.bank_goods,) if state.bank_goods is not None else kinds


def capacity(player: SeatState) -> int:
    return sum(player.camels)


def over_capacity(player: SeatState) -> bool:
    return len(player.goods) > sum(player.camels)


def _by_kind(state: State, seat: int) -> dict[str, list[int]]:
    """The seat's goods by type, over the types it could buy (every type in play but its own)."""
    own = state.players[seat].sells
    kinds: dict[str, list[int]] = {k: [] for k in kinds_in_play(state) if k != own}
    for g in state.players[seat].goods:
        kinds.setdefault(g.kind, []).append(g.value)
    return kinds


def least_bought_tie(state: State, seat: int) -> tuple[str, ...]:
    """The tied least-bought types the seat must choose among; empty when there is nothing to choose (no tie,
    a type never bought, or tied types worth the same)."""
    kinds = _by_kind(state, seat)
    fewest = min(len(v) for v in kinds.values())
    if fewest == 0:
        return ()
    tied = tuple(k for k in data.GOODS if k in kinds and len(kinds[k]) == fewest)
    if len({sum(kinds[k]) for k in tied}) < 2:
        return ()
    return tied


def scoring_pending(state: State, seat: int) -> bool:
    me = state.players[seat]
    if over_capacity(me):
        return True
    return me.least_bought is None and bool(least_bought_tie(state, seat))


def wealth_points(money: Sequence[int], table: Sequence[int]) -> tuple[int, ...]:
    """Points by position, as in a competition ranking: a player's position is one more than the number of players
    richer than it, so tied players share a position and score its points, and the next player's position
    counts them all (10/10/8/5 -> positions 1, 1, 3, 4 -> 5/5/1/0). Positions beyond the table score nothing."""
    positions = [sum(other > m for other in money) for m in money]  # 0-based
    return tuple(table[p] if p < len(table) else 0 for p in positions)


def seat_score(state: State, seat: int, wealth: int) -> SeatScore:
    me = state.players[seat]
    kinds = _by_kind(state, seat)
    fewest = min(len(v) for v in kinds.values())
    if fewest == 0:
        least_kind, least = None, 0
    elif me.least_bought is not None:
        least_kind, least = me.least_bought, sum(kinds[me.least_bought])
    else:
        tied = [k for k in data.GOODS if k in kinds and len(kinds[k]) == fewest]
        least_kind = max(tied, key=lambda k: sum(kinds[k]))
        least = sum(kinds[least_kind])
    counts: dict[int, int] = {}
    for g in me.goods:
        counts[g.value] = counts.get(g.value, 0) + 1
    series = sum(data.series_points(c) for c in counts.values())
    cap = capacity(me)
    kept = len(me.goods)
    penalty = -data.EMPTY_SLOT_PENALTY * max(0, cap - kept)
    return SeatScore(
        money=me.money,
        wealth=wealth,
        least_bought_kind=least_kind,
        least_bought=least,
        series=series,
        capacity=cap,
        goods_kept=kept,
        capacity_penalty=penalty,
        discarded=me.discarded,
        total=wealth + least + series + penalty,
    )


def scores(state: State) -> tuple[int, ...]:
    """Each seat's points now (the table's ``scores`` hook: a game that ends with seats out of it, before its own
    end): the final scoring (``score``: wealth by money, the least-bought type, the series, the empty places on the
    camels) counted on the game as it stands; once scored, the scores given. A seat that still owes a least-bought
    choice is counted with the tied type worth most, and one over its camels' capacity with every goods card it
    holds (both choices are the seat's at the real scoring)."""
    if state.scores is not None:
        return tuple(state.scores)
    if not state.players:  # before the market is set up
        return (0,) * state.seats
    return tuple(d.total for d in score(state))


def score(state: State) -> tuple[SeatScore, ...]:
    wealth = wealth_points([p.money for p in state.players], data.WEALTH_POINTS[state.seats])
    return tuple(seat_score(state, s, wealth[s]) for s in range(state.seats))
