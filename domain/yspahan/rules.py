"""Yspahan's rules: setup, evolve, decide, legal commands, flow and result.

A day: the first player buys yellow dice and rolls (SUPPLY); then each seat of the day's order takes one turn:
it selects a dice group for an action (ACTION, then PLACE cubes one by one, or MOVE the supervisor and SHIP
the cubes it stops at), may build once, plays cards when it wants, and ends its turn (AFTER). With two players
the day's order is roller, other, roller, and building replaces an action (BUILD).

``decide`` raises ``RuleViolation(code, sentence)`` with one of these codes:
    game_over, not_your_turn, not_now, unknown_command,
    bad_yellow_count, not_enough_gold, not_enough_camels, not_enough_supply,
    no_such_floor, empty_floor, dice_remain, bad_action, discard_not_allowed, card_not_in_hand,
    no_cube_in_reserve, quarter_full, nothing_to_build,
    no_such_shop, wrong_quarter, shop_taken, souk_taken, finish_your_souk,
    no_such_square, shop_not_pending, no_camel,
    no_such_building, already_built, built_this_turn, build_after_action, build_instead_of_action,
    not_a_build_card, no_such_card, use_build_command, bad_card_arguments, bad_count.
``check_options`` raises ``bad_options``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from contracts.table import Flow, Result
from contracts.yspahan import (
    ActionEnded,
    Build,
    BuildingBuilt,
    CamelsTaken,
    CaravanScored,
    CardDrawn,
    CardPlayed,
    CubePlaced,
    CubeShipped,
    DayBegan,
    DeckShuffled,
    DiceRolled,
    DiceSelected,
    EndTurn,
    GoldTaken,
    GoodsExchanged,
    GoodsSold,
    KeepCube,
    LetCubeGo,
    MoveSupervisor,
    Options,
    PlaceCube,
    PlacementBegan,
    PlayCard,
    RollDice,
    SelectDice,
    ShipCube,
    ShipmentChosen,
    SouksScored,
    SupervisorMoved,
    TurnEnded,
    WeekEnded,
)
from domain.chance import Chance
from domain.kernel import RuleViolation
from domain.yspahan import board, data, scoring, shops, supervisor
from domain.yspahan.state import (
    ACTION,
    AFTER,
    BUILD,
    DAY_OVER,
    EMPTY_FLOOR,
    EMPTY_TOWER,
    MOVE,
    OVER,
    PLACE,
    SETUP,
    SHIP,
    SUPPLY,
    PlayerState,
    State,
    caravan_capacity,
    initial_state,
)

__all__ = [
    "setup", "initial_state", "evolve", "decide", "flow", "legal_commands", "result", "check_options",
    "build_tower", "day_order",
]  # fmt: skip

ACTIONS = ("floor", "supervisor", "card", "build")

# --- setup and options ----------------------------------------------------------------------------------


def check_options(seats: int, options: Options) -> None:
    if options.caravan_width_2p not in (3, 4):
        raise RuleViolation("bad_options", "caravan_width_2p is 3 or 4 camels per row")
    if not 1 <= options.cubes_per_player <= 100:
        raise RuleViolation("bad_options", "cubes_per_player is between 1 and 100")
    if options.gold_in_box < data.START_GOLD * seats or options.gold_in_box > 10_000:
        raise RuleViolation("bad_options", f"gold_in_box is between {data.START_GOLD * seats} and 10000")
    if not 0 <= options.camels_in_box <= 10_000:
        raise RuleViolation("bad_options", "camels_in_box is between 0 and 10000")


def day_order(seats: int, first: int) -> tuple[int, ...]:
    if seats == 2:  # roller, other, roller
        return (first, 1 - first, first)
    return tuple((first + i) % seats for i in range(seats))


def setup(seats: int, options: Options, chance: Chance) -> list[Any]:
    order = chance.shuffled(board.FULL_DECK)
    return [
        DeckShuffled(order=order, size=len(order)),
        DayBegan(week=1, day=1, order=day_order(seats, 0)),
    ]


def build_tower(white: tuple[int, ...], yellow: tuple[int, ...]) -> tuple[tuple[int, int, int], ...]:
    """Groups by value, lowest on the camels, next values floor by floor upward, highest always on gold;
    all dice equal: all on the camels."""
    values = sorted(set(white) | set(yellow))
    groups = [(v, white.count(v), yellow.count(v)) for v in values]
    tower = list(EMPTY_TOWER)
    if len(groups) == 1:
        tower[data.CAMELS_FLOOR] = groups[0]
        return tuple(tower)
    for floor, group in enumerate(groups[:-1]):
        tower[floor] = group
    tower[data.GOLD_FLOOR] = groups[-1]
    return tuple(tower)


# --- evolve ---------------------------------------------------------------------------------------------


def _players(state: State, seat: int, **changes: Any) -> tuple[PlayerState, ...]:
    players = list(state.players)
    players[seat] = replace(players[seat], **changes)
    return tuple(players)


def _without(cards: tuple[str, ...], card: str) -> tuple[str, ...]:
    i = cards.index(card)
    return cards[:i] + cards[i + 1 :]


def _ev_deck_shuffled(s: State, e: DeckShuffled) -> State:
    return replace(s, deck=tuple(e.order), discard=())


def _ev_day_began(s: State, e: DayBegan) -> State:
    return replace(
        s,
        week=e.week,
        day=e.day,
        order=tuple(e.order),
        turn=0,
        step=SUPPLY,
        tower=EMPTY_TOWER,
        built=False,
        cubes_left=0,
        move_value=0,
        ship_pending=(),
        ship_shop=-1,
    )


def _ev_dice_rolled(s: State, e: DiceRolled) -> State:
    p = s.players[e.seat]
    paid = len(e.yellow) * data.YELLOW_DIE_COST
    return replace(
        s,
        players=_players(s, e.seat, gold=p.gold - paid),
        gold_supply=s.gold_supply + paid,
        tower=build_tower(tuple(e.white), tuple(e.yellow)),
        step=ACTION,
    )


def _ev_dice_selected(s: State, e: DiceSelected) -> State:
    changes: dict[str, Any] = {}
    if e.floor is not None:
        tower = list(s.tower)
        tower[board.FLOOR_INDEX[e.floor]] = EMPTY_FLOOR
        changes["tower"] = tuple(tower)
    if e.discard is not None:
        p = s.players[e.seat]
        changes["players"] = _players(s, e.seat, hand=_without(p.hand, e.discard))
        changes["discard"] = s.discard + (e.discard,)
    if e.action == "supervisor":
        changes["step"] = MOVE
        changes["move_value"] = e.value
    elif e.action == "build":
        changes["step"] = BUILD
    return replace(s, **changes)


def _ev_camels_taken(s: State, e: CamelsTaken) -> State:
    p = s.players[e.seat]
    return replace(s, players=_players(s, e.seat, camels=p.camels + e.count), camel_supply=s.camel_supply - e.count)


def _ev_gold_taken(s: State, e: GoldTaken) -> State:
    p = s.players[e.seat]
    return replace(s, players=_players(s, e.seat, gold=p.gold + e.count), gold_supply=s.gold_supply - e.count)


def _ev_placement_began(s: State, e: PlacementBegan) -> State:
    return replace(s, step=PLACE, quarter=board.FLOOR_INDEX[e.quarter], cubes_left=e.cubes)


def _ev_cube_placed(s: State, e: CubePlaced) -> State:
    cubes = list(s.shops)
    cubes[board.SHOP_INDEX[e.shop]] = e.seat
    p = s.players[e.seat]
    return replace(
        s,
        shops=tuple(cubes),
        players=_players(s, e.seat, reserve=p.reserve - 1),
        cubes_left=s.cubes_left if e.by_card else s.cubes_left - 1,
    )


def _ev_supervisor_moved(s: State, e: SupervisorMoved) -> State:
    square = board.SQUARE_INDEX[e.square]
    pending = tuple(shop for shop in board.FACING[square] if s.shops[shop] >= 0)
    p = s.players[e.seat]
    return replace(
        s,
        supervisor=square,
        players=_players(s, e.seat, gold=p.gold - e.gold),
        gold_supply=s.gold_supply + e.gold,
        step=SHIP,
        ship_pending=pending,
        ship_shop=pending[0] if len(pending) == 1 else -1,
    )


def _ev_shipment_chosen(s: State, e: ShipmentChosen) -> State:
    return replace(s, ship_shop=board.SHOP_INDEX[e.shop])


def _ev_cube_shipped(s: State, e: CubeShipped) -> State:
    p = s.players[e.seat]
    changes: dict[str, Any] = {"caravan": s.caravan + (e.seat,)}
    if e.shop is None or e.camel:
        player = {"reserve": p.reserve - 1}
        if e.camel:
            player["camels"] = p.camels - 1
            changes["camel_supply"] = s.camel_supply + 1
    else:
        player = {}
        cubes = list(s.shops)
        cubes[board.SHOP_INDEX[e.shop]] = -1
        changes["shops"] = tuple(cubes)
    changes["players"] = _players(s, e.seat, score=p.score + e.points, **player)
    if e.shop is not None:
        shop = board.SHOP_INDEX[e.shop]
        pending = tuple(x for x in s.ship_pending if x != shop)
        changes["ship_pending"] = pending
        changes["ship_shop"] = pending[0] if len(pending) == 1 else -1
    return replace(s, **changes)


def _ev_card_drawn(s: State, e: CardDrawn) -> State:
    p = s.players[e.seat]
    card = e.card if e.card is not None else s.deck[0]
    return replace(s, deck=s.deck[1:], players=_players(s, e.seat, hand=tuple(sorted(p.hand + (card,)))))


def _ev_card_played(s: State, e: CardPlayed) -> State:
    p = s.players[e.seat]
    return replace(s, players=_players(s, e.seat, hand=_without(p.hand, e.card)), discard=s.discard + (e.card,))


def _ev_goods_sold(s: State, e: GoodsSold) -> State:
    p = s.players[e.seat]
    return replace(
        s,
        players=_players(s, e.seat, camels=p.camels - e.camels, gold=p.gold - e.gold, score=p.score + e.points),
        camel_supply=s.camel_supply + e.camels,
        gold_supply=s.gold_supply + e.gold,
    )


def _ev_goods_exchanged(s: State, e: GoodsExchanged) -> State:
    p = s.players[e.seat]
    n = e.count if e.give == "gold" else -e.count  # gold given (negative: gold taken)
    return replace(
        s,
        players=_players(s, e.seat, gold=p.gold - n, camels=p.camels + n),
        gold_supply=s.gold_supply + n,
        camel_supply=s.camel_supply - n,
    )


def _ev_building_built(s: State, e: BuildingBuilt) -> State:
    p = s.players[e.seat]
    return replace(
        s,
        players=_players(
            s,
            e.seat,
            camels=p.camels - e.camels,
            gold=p.gold - e.gold,
            reserve=p.reserve - 1,
            buildings=p.buildings + (e.building,),
            score=p.score + e.points,
        ),
        camel_supply=s.camel_supply + e.camels,
        gold_supply=s.gold_supply + e.gold,
        built=True,
    )


def _ev_action_ended(s: State, e: ActionEnded) -> State:
    if s.seats > 2 and s.turn == 0:  # the yellow dice leave the tower after the first player's action
        tower = tuple(EMPTY_FLOOR if w == 0 else (v, w, 0) for v, w, _ in s.tower)
        return replace(s, step=AFTER, tower=tower, cubes_left=0, ship_pending=(), ship_shop=-1)
    return replace(s, step=AFTER, cubes_left=0, ship_pending=(), ship_shop=-1)


def _ev_turn_ended(s: State, e: TurnEnded) -> State:
    turn = s.turn + 1
    if turn < len(s.order):
        return replace(s, turn=turn, step=ACTION, built=False)
    return replace(s, step=DAY_OVER, built=False)


def _ev_souks_scored(s: State, e: SouksScored) -> State:
    back = [0] * s.seats
    for owner in s.shops:
        if owner >= 0:
            back[owner] += 1
    players = tuple(
        replace(p, score=p.score + e.points[i], reserve=p.reserve + back[i]) for i, p in enumerate(s.players)
    )
    return replace(s, players=players, shops=board.NO_CUBES)


def _ev_caravan_scored(s: State, e: CaravanScored) -> State:
    back = [0] * s.seats
    if e.emptied:
        for owner in s.caravan:
            back[owner] += 1
    players = tuple(
        replace(p, score=p.score + e.points[i], reserve=p.reserve + back[i]) for i, p in enumerate(s.players)
    )
    return replace(s, players=players, caravan=() if e.emptied else s.caravan)


def _ev_week_ended(s: State, e: WeekEnded) -> State:
    return replace(s, supervisor=board.CENTRE, step=OVER if e.week >= data.WEEKS else s.step)


_EVOLVERS: dict[type, Callable[[State, Any], State]] = {
    DeckShuffled: _ev_deck_shuffled,
    DayBegan: _ev_day_began,
    DiceRolled: _ev_dice_rolled,
    DiceSelected: _ev_dice_selected,
    CamelsTaken: _ev_camels_taken,
    GoldTaken: _ev_gold_taken,
    PlacementBegan: _ev_placement_began,
    CubePlaced: _ev_cube_placed,
    SupervisorMoved: _ev_supervisor_moved,
    ShipmentChosen: _ev_shipment_chosen,
    CubeShipped: _ev_cube_shipped,
    CardDrawn: _ev_card_drawn,
    CardPlayed: _ev_card_played,
    GoodsSold: _ev_goods_sold,
    GoodsExchanged: _ev_goods_exchanged,
    BuildingBuilt: _ev_building_built,
    ActionEnded: _ev_action_ended,
    TurnEnded: _ev_turn_ended,
    SouksScored: _ev_souks_scored,
    CaravanScored: _ev_caravan_scored,
    WeekEnded: _ev_week_ended,
}


def evolve(state: State, event: Any) -> State:
    return _EVOLVERS[type(event)](state, event)


# --- reading the state ----------------------------------------------------------------------------------


def awaiting(state: State) -> tuple[int, ...]:
    step = state.step
    if step in (SETUP, DAY_OVER, OVER):
        return ()
    if step == SHIP and state.ship_shop >= 0:
        return (state.shops[state.ship_shop],)
    return (state.order[state.turn],)


_PHASES = {
    SETUP: "setup",
    SUPPLY: "supply",
    ACTION: "action",
    PLACE: "place_cubes",
    MOVE: "move_supervisor",
    BUILD: "build",
    AFTER: "end_of_turn",
    DAY_OVER: "day_over",
    OVER: "over",
}


def phase(state: State) -> str:
    if state.step == SHIP:
        return "ship_answer" if state.ship_shop >= 0 else "ship_order"
    return _PHASES[state.step]


def flow(state: State) -> Flow:
    if state.step == OVER:
        return Flow(phase="over", round=_round(state))
    turn_seat = state.order[state.turn] if state.order and state.step != DAY_OVER else None
    return Flow(phase=phase(state), awaiting=awaiting(state), round=_round(state), turn_seat=turn_seat)


def _round(state: State) -> int:
    return (state.week - 1) * data.DAYS_PER_WEEK + state.day if state.week else 0


def result(state: State) -> Result | None:
    if state.step != OVER:
        return None
    scores = tuple(p.score for p in state.players)
    best = max(scores)
    winners = tuple(i for i, s in enumerate(scores) if s == best)
    return Result(scores=scores, winners=winners, details={"buildings": [list(p.buildings) for p in state.players]})


def usable_dice(state: State, seat: int, floor: int) -> int:
    """Dice of the floor's group that count for ``seat`` (yellow dice only for the seat that rolled)."""
    value, white, yellow = state.tower[floor]
    if value == 0:
        return 0
    return white + yellow if seat == state.order[0] else white


def _usable_floors(state: State, seat: int) -> list[int]:
    return [f for f in range(len(data.FLOORS)) if usable_dice(state, seat, f)]


def _build_costs(p: PlayerState, building: str, card: str | None) -> tuple[int, int]:
    camels, gold = board.BUILDING_COST[building]
    if card == "build_gold_only":
        camels = 0
    elif card == "build_camels_only":
        gold = 0
    return camels, gold


def _build_options(p: PlayerState, with_paid: bool = True) -> list[Build]:
    """Every Build the player can pay now (ignoring when building is allowed)."""
    if p.reserve < 1:
        return []
    cards = [c for c in data.BUILD_CARDS if c in p.hand]
    out = []
    for building in board.BUILDING_IDS:
        if building in p.buildings:
            continue
        camels, gold = board.BUILDING_COST[building]
        if with_paid and p.camels >= camels and p.gold >= gold:
            out.append(Build(building=building))
        for card in cards:
            c, g = _build_costs(p, building, card)
            if p.camels >= c and p.gold >= g:
                out.append(Build(building=building, card=card))
    return out


def _card_plays(state: State, seat: int) -> list[PlayCard]:
    p = state.players[seat]
    out: list[PlayCard] = []
    for card in sorted(set(p.hand)):
        if card in ("take_camels", "take_gold"):
            out.append(PlayCard(card=card))
        elif card == "caravan_cube":
            if p.reserve:
                out.append(PlayCard(card=card))
        elif card == "place_cube":
            if p.reserve:
                for quarter in data.QUARTER_FLOORS:
                    for shop in shops.open_shops(state.shops, seat, quarter):
                        out.append(PlayCard(card=card, shop=board.SHOPS[shop]))
        elif card == "sell_camels":
            out.extend(PlayCard(card=card, count=n) for n in range(1, min(data.SELL_CAMELS_MAX, p.camels) + 1))
        elif card == "sell_gold":
            out.extend(PlayCard(card=card, count=n) for n in range(1, min(data.SELL_GOLD_MAX, p.gold) + 1))
        elif card == "exchange":
            out.extend(PlayCard(card=card, count=n, give="gold") for n in range(1, min(p.gold, state.camel_supply) + 1))
            out.extend(
                PlayCard(card=card, count=n, give="camels") for n in range(1, min(p.camels, state.gold_supply) + 1)
            )
    return out


def _has_card_play(state: State, seat: int) -> bool:
    p = state.players[seat]
    for card in p.hand:
        if card in ("take_camels", "take_gold"):
            return True
        if card == "caravan_cube" and p.reserve:
            return True
        if card == "sell_camels" and p.camels:
            return True
        if card == "sell_gold" and p.gold:
            return True
        if card == "exchange" and ((p.gold and state.camel_supply) or (p.camels and state.gold_supply)):
            return True
        if card == "place_cube" and p.reserve:
            if any(shops.has_open_shop(state.shops, seat, q) for q in data.QUARTER_FLOORS):
                return True
    return False


def _may_build_after(state: State) -> bool:
    return state.seats > 2 and not state.built


def _has_optional(state: State, seat: int) -> bool:
    """Something besides EndTurn is open to the seat at the end of its turn."""
    if _has_card_play(state, seat):
        return True
    return _may_build_after(state) and bool(_build_options(state.players[seat]))


# --- legal commands -------------------------------------------------------------------------------------


def legal_commands(state: State, seat: int) -> list[Any]:
    if seat not in awaiting(state):
        return []
    step = state.step
    p = state.players[seat]
    if step == SUPPLY:
        return [RollDice(yellow=n) for n in range(min(data.MAX_YELLOW_DICE, p.gold // data.YELLOW_DIE_COST) + 1)]
    if step == ACTION:
        out: list[Any] = []
        floors = _usable_floors(state, seat)
        can_build = state.seats == 2 and bool(_build_options(p))
        if not floors:
            out.append(SelectDice(floor=None, action="card"))
            if can_build:
                out.append(SelectDice(floor=None, action="build"))
        discards: list[str | None] = [None, *sorted(set(p.hand))]
        for f in floors:
            name = data.FLOORS[f]
            if f in (data.CAMELS_FLOOR, data.GOLD_FLOOR) or (p.reserve and shops.has_open_shop(state.shops, seat, f)):
                out.extend(SelectDice(floor=name, action="floor", discard=d) for d in discards)
            out.append(SelectDice(floor=name, action="supervisor"))
            out.append(SelectDice(floor=name, action="card"))
            if can_build:
                out.append(SelectDice(floor=name, action="build"))
        out.extend(_card_plays(state, seat))
        if state.seats > 2 and not state.built:
            out.extend(b for b in _build_options(p, with_paid=False))
        return out
    if step == PLACE:
        return [PlaceCube(shop=board.SHOPS[s]) for s in shops.open_shops(state.shops, seat, state.quarter)]
    if step == MOVE:
        free = supervisor.free_steps(p.buildings)
        return [
            MoveSupervisor(square=board.SQUARES[sq])
            for sq, _ in supervisor.destinations(state.supervisor, state.move_value, p.gold, free)
        ]
    if step == SHIP:
        if state.ship_shop < 0:
            return [ShipCube(shop=board.SHOPS[s]) for s in state.ship_pending]
        if p.camels and p.reserve:
            return [KeepCube(), LetCubeGo()]
        return [LetCubeGo()]
    if step == BUILD:
        return list(_build_options(p))
    if step == AFTER:
        out = list(_card_plays(state, seat))
        if _may_build_after(state):
            out.extend(_build_options(p))
        out.append(EndTurn())
        return out
    return []


# --- decide ---------------------------------------------------------------------------------------------


class _Ctx:
    """The events of one decision, folded as they are emitted so later rules see their effect."""

    __slots__ = ("state", "events", "chance")

    def __init__(self, state: State, chance: Chance) -> None:
        self.state = state
        self.events: list[Any] = []
        self.chance = chance

    def emit(self, event: Any) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)


def _refuse(code: str, message: str) -> RuleViolation:
    return RuleViolation(code, message)


def _need_step(state: State, *steps: str) -> None:
    if state.step not in steps:
        raise _refuse("not_now", f"this command is not expected now (phase {phase(state)})")


def _decide_roll(ctx: _Ctx, seat: int, cmd: RollDice) -> None:
    s = ctx.state
    _need_step(s, SUPPLY)
    n = cmd.yellow
    if not isinstance(n, int) or not 0 <= n <= data.MAX_YELLOW_DICE:
        raise _refuse("bad_yellow_count", f"buy 0 to {data.MAX_YELLOW_DICE} yellow dice")
    if n * data.YELLOW_DIE_COST > s.players[seat].gold:
        raise _refuse("not_enough_gold", f"{n} yellow dice cost {n * data.YELLOW_DIE_COST} gold")
    white = ctx.chance.roll(data.WHITE_DICE[s.seats])
    yellow = ctx.chance.roll(n)
    ctx.emit(DiceRolled(seat=seat, white=white, yellow=yellow))


def _decide_select(ctx: _Ctx, seat: int, cmd: SelectDice) -> None:
    s = ctx.state
    _need_step(s, ACTION)
    p = s.players[seat]
    action = cmd.action
    if action not in ACTIONS or (action == "build" and s.seats != 2):
        raise _refuse("bad_action", "the actions are floor, supervisor, card (and build with 2 players)")
    if cmd.floor is None:
        if _usable_floors(s, seat):
            raise _refuse("dice_remain", "a dice group is left in the tower: select one")
        if action not in ("card", "build"):
            raise _refuse("bad_action", "with no dice group left, the action is to draw a card")
        floor, dice, value = -1, 0, 0
    else:
        floor = board.FLOOR_INDEX.get(cmd.floor, -1)
        if floor < 0:
            raise _refuse("no_such_floor", f"the tower has no floor {cmd.floor!r}")
        dice = usable_dice(s, seat, floor)
        if not dice:
            raise _refuse("empty_floor", f"no dice for you on the {cmd.floor} floor")
        value = s.tower[floor][0]
    if cmd.discard is not None:
        if action != "floor" or floor < 0:
            raise _refuse("discard_not_allowed", "a card is discarded for one more die of a floor's own action")
        if cmd.discard not in p.hand:
            raise _refuse("card_not_in_hand", f"you hold no {cmd.discard} card")
        dice += 1
    if action == "floor" and floor in data.QUARTER_FLOORS:
        if not p.reserve:
            raise _refuse("no_cube_in_reserve", "you have no cube in reserve")
        if not shops.has_open_shop(s.shops, seat, floor):
            raise _refuse("quarter_full", f"no shop of the {cmd.floor} quarter is open to you")
    if action == "build" and not _build_options(p):
        raise _refuse("nothing_to_build", "you cannot pay for any building you lack")
    ctx.emit(DiceSelected(seat=seat, floor=cmd.floor, action=action, discard=cmd.discard, dice=dice, value=value))
    buildings = p.buildings
    if action == "floor":
        if floor == data.CAMELS_FLOOR:
            bonus = data.PEN_BONUS if "pen" in buildings else 0
            ctx.emit(CamelsTaken(seat=seat, count=min(dice + bonus, ctx.state.camel_supply)))
            ctx.emit(ActionEnded(seat=seat))
        elif floor == data.GOLD_FLOOR:
            bonus = data.STALL_BONUS if "stall" in buildings else 0
            ctx.emit(GoldTaken(seat=seat, count=min(dice + bonus, ctx.state.gold_supply)))
            ctx.emit(ActionEnded(seat=seat))
        else:
            bonus = data.CRANE_BONUS if "crane" in buildings else 0
            cubes = min(dice + bonus, ctx.state.players[seat].reserve)
            ctx.emit(PlacementBegan(seat=seat, quarter=cmd.floor, cubes=cubes))
    elif action == "card":
        _draw(ctx, seat)
        ctx.emit(ActionEnded(seat=seat))


def _draw(ctx: _Ctx, seat: int) -> None:
    s = ctx.state
    if not s.deck:
        if not s.discard:
            return  # every card is in a hand: nothing to draw
        order = ctx.chance.shuffled(s.discard)
        ctx.emit(DeckShuffled(order=order, size=len(order)))
    ctx.emit(CardDrawn(seat=seat, card=ctx.state.deck[0]))


def _shop_index(shop: Any) -> int:
    index = board.SHOP_INDEX.get(shop, -1) if isinstance(shop, str) else -1
    if index < 0:
        raise _refuse("no_such_shop", f"there is no shop {shop!r}")
    return index


def _check_shop(state: State, seat: int, shop: int) -> None:
    code = shops.refusal(state.shops, seat, shop)
    if code == "shop_taken":
        raise _refuse(code, f"shop {board.SHOPS[shop]} already holds a cube")
    if code == "souk_taken":
        raise _refuse(code, "another player has started this souk")
    if code == "finish_your_souk":
        raise _refuse(code, "finish the souk you started in this quarter before starting another")


def _decide_place(ctx: _Ctx, seat: int, cmd: PlaceCube) -> None:
    s = ctx.state
    _need_step(s, PLACE)
    shop = _shop_index(cmd.shop)
    if board.SOUK_QUARTER[board.SHOP_SOUK[shop]] != s.quarter:
        raise _refuse("wrong_quarter", f"place your cubes in the {data.FLOORS[s.quarter]} quarter")
    _check_shop(s, seat, shop)
    ctx.emit(CubePlaced(seat=seat, shop=board.SHOPS[shop]))


def _decide_move(ctx: _Ctx, seat: int, cmd: MoveSupervisor) -> None:
    s = ctx.state
    _need_step(s, MOVE)
    square = board.SQUARE_INDEX.get(cmd.square, -1) if isinstance(cmd.square, str) else -1
    if square < 0:
        raise _refuse("no_such_square", f"the road has no square {cmd.square!r}")
    p = s.players[seat]
    cost = supervisor.move_cost(s.supervisor, square, s.move_value, supervisor.free_steps(p.buildings))
    if cost > p.gold:
        raise _refuse("not_enough_gold", f"reaching {cmd.square} costs {cost} gold")
    ctx.emit(SupervisorMoved(seat=seat, square=cmd.square, gold=cost))


def _decide_ship_cube(ctx: _Ctx, seat: int, cmd: ShipCube) -> None:
    s = ctx.state
    _need_step(s, SHIP)
    if s.ship_shop >= 0:
        raise _refuse("not_now", "the cube's owner decides now")
    shop = _shop_index(cmd.shop)
    if shop not in s.ship_pending:
        raise _refuse("shop_not_pending", f"shop {cmd.shop} has no cube leaving for the caravan")
    ctx.emit(ShipmentChosen(seat=seat, shop=cmd.shop))


def _decide_keep(ctx: _Ctx, seat: int, cmd: KeepCube) -> None:
    s = ctx.state
    _need_step(s, SHIP)
    if s.ship_shop < 0:
        raise _refuse("not_now", "the mover picks the next shop first")
    p = s.players[seat]
    if not p.camels:
        raise _refuse("no_camel", "keeping the cube costs a camel")
    if not p.reserve:
        raise _refuse("no_cube_in_reserve", "a reserve cube must go to the caravan instead")
    _ship(ctx, seat, s.ship_shop, camel=True)


def _decide_let_go(ctx: _Ctx, seat: int, cmd: LetCubeGo) -> None:
    s = ctx.state
    _need_step(s, SHIP)
    if s.ship_shop < 0:
        raise _refuse("not_now", "the mover picks the next shop first")
    _ship(ctx, seat, s.ship_shop, camel=False)


def _ship(ctx: _Ctx, owner: int, shop: int | None, camel: bool) -> None:
    """A cube of ``owner`` enters the caravan (from ``shop``; None: the caravan card)."""
    s = ctx.state
    points = scoring.entry_points(s)
    ctx.emit(CubeShipped(seat=owner, shop=None if shop is None else board.SHOPS[shop], camel=camel, points=points))
    if shop is not None and "caravanserai" in s.players[owner].buildings:
        _draw(ctx, owner)
    if len(ctx.state.caravan) >= caravan_capacity(s.seats, s.options):
        ctx.emit(CaravanScored(points=scoring.caravan_points(ctx.state), emptied=True))


def _decide_build(ctx: _Ctx, seat: int, cmd: Build) -> None:
    s = ctx.state
    if s.seats == 2:
        if s.step in (ACTION, AFTER):
            raise _refuse("build_instead_of_action", "with 2 players, build by selecting the build action")
        _need_step(s, BUILD)
    else:
        _need_step(s, ACTION, AFTER)
        if s.built:
            raise _refuse("built_this_turn", "one building per turn")
        if s.step == ACTION and cmd.card is None:
            raise _refuse("build_after_action", "build after your dice action (or now with a building card)")
    p = s.players[seat]
    if cmd.building not in board.BUILDING_COST:
        raise _refuse("no_such_building", f"there is no building {cmd.building!r}")
    if cmd.building in p.buildings:
        raise _refuse("already_built", f"you already have the {cmd.building}")
    if cmd.card is not None:
        if cmd.card not in data.BUILD_CARDS:
            raise _refuse("not_a_build_card", f"{cmd.card} is not a building card")
        if cmd.card not in p.hand:
            raise _refuse("card_not_in_hand", f"you hold no {cmd.card} card")
    if not p.reserve:
        raise _refuse("no_cube_in_reserve", "a building is marked with a cube from your reserve")
    camels, gold = _build_costs(p, cmd.building, cmd.card)
    if p.camels < camels:
        raise _refuse("not_enough_camels", f"the {cmd.building} costs {camels} camels")
    if p.gold < gold:
        raise _refuse("not_enough_gold", f"the {cmd.building} costs {gold} gold")
    if cmd.card is not None:
        ctx.emit(CardPlayed(seat=seat, card=cmd.card))
    points = scoring.building_points(len(p.buildings))
    ctx.emit(BuildingBuilt(seat=seat, building=cmd.building, camels=camels, gold=gold, points=points))
    if s.step == BUILD:
        ctx.emit(ActionEnded(seat=seat))


def _bad_arguments(card: str) -> RuleViolation:
    return _refuse("bad_card_arguments", f"wrong arguments for the {card} card")


def _decide_play(ctx: _Ctx, seat: int, cmd: PlayCard) -> None:
    s = ctx.state
    _need_step(s, ACTION, AFTER)
    card = cmd.card
    if card not in board.CARD_SET:
        raise _refuse("no_such_card", f"there is no card {card!r}")
    if card in data.BUILD_CARDS:
        raise _refuse("use_build_command", "building cards are played with the Build command")
    p = s.players[seat]
    if card not in p.hand:
        raise _refuse("card_not_in_hand", f"you hold no {card} card")
    if card == "place_cube":
        if cmd.shop is None or cmd.count or cmd.give is not None:
            raise _bad_arguments(card)
    elif cmd.shop is not None or (card != "exchange" and cmd.give is not None):
        raise _bad_arguments(card)
    elif card in ("take_camels", "take_gold", "caravan_cube") and cmd.count:
        raise _bad_arguments(card)

    if card == "take_camels":
        ctx.emit(CardPlayed(seat=seat, card=card))
        ctx.emit(CamelsTaken(seat=seat, count=min(data.TAKE_CARD_AMOUNT, s.camel_supply)))
    elif card == "take_gold":
        ctx.emit(CardPlayed(seat=seat, card=card))
        ctx.emit(GoldTaken(seat=seat, count=min(data.TAKE_CARD_AMOUNT, s.gold_supply)))
    elif card == "place_cube":
        shop = _shop_index(cmd.shop)
        if not p.reserve:
            raise _refuse("no_cube_in_reserve", "you have no cube in reserve")
        _check_shop(s, seat, shop)
        ctx.emit(CardPlayed(seat=seat, card=card))
        ctx.emit(CubePlaced(seat=seat, shop=board.SHOPS[shop], by_card=True))
    elif card == "caravan_cube":
        if not p.reserve:
            raise _refuse("no_cube_in_reserve", "you have no cube in reserve")
        ctx.emit(CardPlayed(seat=seat, card=card))
        _ship(ctx, seat, None, camel=False)
    elif card in ("sell_camels", "sell_gold"):
        camels = card == "sell_camels"
        most = data.SELL_CAMELS_MAX if camels else data.SELL_GOLD_MAX
        n = cmd.count
        if not isinstance(n, int) or not 1 <= n <= most:
            raise _refuse("bad_count", f"return 1 to {most} {'camels' if camels else 'gold'}")
        if camels and n > p.camels:
            raise _refuse("not_enough_camels", f"you have {p.camels} camels")
        if not camels and n > p.gold:
            raise _refuse("not_enough_gold", f"you have {p.gold} gold")
        points = n * (data.SELL_CAMEL_POINTS if camels else data.SELL_GOLD_POINTS)
        ctx.emit(CardPlayed(seat=seat, card=card))
        ctx.emit(GoodsSold(seat=seat, camels=n if camels else 0, gold=0 if camels else n, points=points))
    elif card == "exchange":
        n = cmd.count
        if cmd.give not in ("gold", "camels"):
            raise _bad_arguments(card)
        if not isinstance(n, int) or n < 1:
            raise _refuse("bad_count", "exchange at least one")
        if cmd.give == "gold":
            if n > p.gold:
                raise _refuse("not_enough_gold", f"you have {p.gold} gold")
            if n > s.camel_supply:
                raise _refuse("not_enough_supply", f"the supply has {s.camel_supply} camels")
        else:
            if n > p.camels:
                raise _refuse("not_enough_camels", f"you have {p.camels} camels")
            if n > s.gold_supply:
                raise _refuse("not_enough_supply", f"the supply has {s.gold_supply} gold")
        ctx.emit(CardPlayed(seat=seat, card=card))
        ctx.emit(GoodsExchanged(seat=seat, give=cmd.give, count=n))


def _decide_end(ctx: _Ctx, seat: int, cmd: EndTurn) -> None:
    _need_step(ctx.state, AFTER)
    ctx.emit(TurnEnded(seat=seat))


_DECIDERS: dict[type, Callable[[_Ctx, int, Any], None]] = {
    RollDice: _decide_roll,
    SelectDice: _decide_select,
    PlaceCube: _decide_place,
    MoveSupervisor: _decide_move,
    ShipCube: _decide_ship_cube,
    KeepCube: _decide_keep,
    LetCubeGo: _decide_let_go,
    Build: _decide_build,
    PlayCard: _decide_play,
    EndTurn: _decide_end,
}


def _settle(ctx: _Ctx) -> None:
    """The automatic consequences: forced shipments, the end of a placement, of a turn, of a day, a week."""
    while True:
        s = ctx.state
        step = s.step
        if step == SHIP:
            if s.ship_shop < 0:
                if s.ship_pending:
                    return  # the mover picks the next shop
                ctx.emit(ActionEnded(seat=s.current))
                continue
            owner = s.shops[s.ship_shop]
            p = s.players[owner]
            if p.camels and p.reserve:
                return  # the owner decides
            _ship(ctx, owner, s.ship_shop, camel=False)
        elif step == PLACE:
            if s.cubes_left and shops.has_open_shop(s.shops, s.current, s.quarter):
                return
            ctx.emit(ActionEnded(seat=s.current))
        elif step == AFTER:
            if _has_optional(s, s.current):
                return
            ctx.emit(TurnEnded(seat=s.current))
        elif step == DAY_OVER:
            _end_day(ctx)
        else:
            return


def _end_day(ctx: _Ctx) -> None:
    s = ctx.state
    week, day = s.week, s.day + 1
    if s.day == data.DAYS_PER_WEEK:
        completed = scoring.complete_souks(s)
        ctx.emit(SouksScored(completed=completed, points=scoring.souk_points(s, completed)))
        ctx.emit(CaravanScored(points=scoring.caravan_points(ctx.state), emptied=False))
        ctx.emit(WeekEnded(week=s.week))
        if ctx.state.step == OVER:
            return
        week, day = s.week + 1, 1
    if s.seats == 4 and week == data.WEEKS and day == data.DAYS_PER_WEEK:
        order = last_day_order(ctx.state)
    else:
        order = day_order(s.seats, (s.order[0] + 1) % s.seats)
    ctx.emit(DayBegan(week=week, day=day, order=order))


def last_day_order(state: State) -> tuple[int, ...]:
    """4 players, last day: ascending score; on a tie, the seat farthest clockwise from day 6's first player
    plays first."""
    first6, n = state.order[0], state.seats
    return tuple(sorted(range(n), key=lambda seat: (state.players[seat].score, -((seat - first6) % n))))


def decide(state: State, seat: int, command: Any, chance: Chance) -> list[Any]:
    if state.step == OVER:
        raise _refuse("game_over", "the game is over")
    if seat not in awaiting(state):
        raise _refuse("not_your_turn", "this seat has no decision to take now")
    handler = _DECIDERS.get(type(command))
    if handler is None:
        raise _refuse("unknown_command", f"Yspahan has no command {type(command).__name__}")
    ctx = _Ctx(state, chance)
    handler(ctx, seat, command)
    _settle(ctx)
    return ctx.events
