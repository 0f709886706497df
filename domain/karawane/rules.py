"""1001 Karawane: state, setup, decide, evolve, legal commands, flow and result.

A round: the first player turns a thief card (``ThiefTurned``), valid for every seat that round; then each seat
clockwise takes its turn. A turn, one stage after the other (``State.stage``, the flow's phase):

- ``equip``: a turn that starts at home begins with one ``Equip`` (0 to 6 cards; the hand never over 6);
- ``move``: before moving, a token may be played (``PlayMap``, or ``PlayGenie`` then ``SwapWith`` in the
  ``genie`` stage); ``Step`` goes to a neighbouring hex (stage ``moving``) and the seat secretly looks at every
  face-down desert hex it enters (``HexLooked``); ``StopMoving`` or the third step ends the move (``MoveEnded``);
- after the move, when no token was played before it, one may be played until the turn ends, but not once a place
  was used in the desert (the turn's order: equip, move, token, adventures; the token may come before the move);
- ``desert`` (owed when the move entered a desert hex or started on one): the places the caravan crossed this turn
  (the hexes it entered; its starting hex only if it entered it again) may be used, each use telling everyone a
  clue: ``Trade``, ``TakeArtifact``, ``BuyWater``, ``HireDrivers``; then ``Supply`` (water, then thieves): not in
  order, the caravan is lost with its whole hand (``CaravanLost``), placed at home at its next turn
  (``CaravanReplaced``), which loses its move (no equip, no move; a token, artifacts bought and ``EndTurn`` as at
  ``home``);
- ``home`` (the move ended at home, or passed through it): the caravan that came home lays out its gold and
  artifacts and gives its equipment back (``CameHome``, at the end of the move, or before it leaves home again if it
  only passed through: « au moment où une caravane revient à la maison »); ``BuyArtifact`` for 5 gold laid out;
  ``EndTurn``;
- ``after`` (elsewhere in the known sector): ``EndTurn``.
The round in which a seat lays out (or buys) its third artifact is the last (``GameOver``).

Hexes have an identity that follows them when a genie swaps them: a hex's id is the cell it was laid on
(``State.board[cell]`` is the id of the hex lying there now; -1 for the known sector). What a seat looked at, the
face-up hexes and the clues are sets of hex ids, so a seat's knowledge follows a swapped hex (the swap is public,
the contents are not).

Refusal codes (``RuleViolation.code``): ``no_such_seat``, ``game_over``, ``unknown_command``;
``not_your_turn``; ``wrong_phase`` (the command does not belong to the turn's current stage); ``bad_count``;
``hand_full`` (over 6 cards); ``supply_empty``; ``token_used`` (one token a turn, before or after the move);
``too_late`` (a token after the move is played before the adventures, not once a place was used);
``no_token``; ``not_desert_hex`` (a known-sector cell, or no cell); ``face_up`` (a face-up hex is neither swapped nor
revealed again); ``same_hex``; ``not_adjacent``; ``not_crossed`` (no such place among the hexes crossed this
turn); ``city_limit`` (2 goods a turn at face-up cities); ``no_goods``; ``no_gold``; ``has_artifact``;
``no_such_artifact``; ``no_water``, ``no_drivers``, ``too_few_drivers``, ``must_pay`` (a seat that can pay water
or a camel driver may not let its caravan be lost), ``no_thieves`` / ``thieves_about`` (``clear`` is for a 0 card
only, and only it); ``cannot_pay`` (less than 5 gold laid out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from contracts.karawane import (
    ArtifactBought,
    ArtifactTaken,
    BuyArtifact,
    BuyWater,
    CameHome,
    CaravanLost,
    CaravanReplaced,
    CaravanStepped,
    CaravanSupplied,
    DesertLaid,
    DriversHired,
    EndTurn,
    Equip,
    Equipped,
    FirstPlayerChosen,
    GameOver,
    GenieSummoned,
    GoldExchanged,
    GoodsTraded,
    HexesSwapped,
    HexLooked,
    HexRevealed,
    HireDrivers,
    MoveEnded,
    Options,
    PlayGenie,
    PlayMap,
    SeatScore,
    Step,
    StopMoving,
    Supply,
    SwapWith,
    TakeArtifact,
    ThiefTurned,
    Trade,
    TurnEnded,
    TurnStarted,
    WaterBought,
)
from contracts.table import Flow, Result
from domain.chance import Chance
from domain.karawane import data
from domain.kernel import RuleViolation

replace = msgspec.structs.replace

SETUP, EQUIP, MOVE, GENIE, MOVING, DESERT, HOME, AFTER, ENDED, OVER = (
    "setup", "equip", "move", "genie", "moving", "desert", "home", "after", "ended", "over")
PLAYING = (EQUIP, MOVE, GENIE, MOVING, DESERT, HOME, AFTER)  # a seat's decision is awaited
ART_INDEX = {a: i for i, a in enumerate(data.ARTIFACTS)}
NO_HEX = -1


# --- state ----------------------------------------------------------------------------------------------

class Hand(msgspec.Struct, frozen=True):
    camel_drivers: int = 0
    water_skins: int = 0
    goods: int = 0
    gold: int = 0  # 1-gold cards (the desert pays no other)
    artifacts: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return self.camel_drivers + self.water_skins + self.goods + self.gold + len(self.artifacts)

    @property
    def equipment(self) -> int:
        return self.camel_drivers + self.water_skins + self.goods


class Seat(msgspec.Struct, frozen=True):
    cell: int | None = data.HOME  # None: lost, placed at home at its next turn
    lost: bool = False
    hand: Hand = Hand()
    ones: int = 0  # laid out at home, for good
    threes: int = 0
    artifacts: tuple[str, ...] = ()  # laid out
    tokens: int = data.TOKENS_PER_SEAT
    seen: tuple[int, ...] = ()  # ids of the hexes this seat looked at, sorted

    @property
    def gold(self) -> int:
        return self.ones + 3 * self.threes

    def owns(self, artifact: str) -> bool:
        return artifact in self.artifacts or artifact in self.hand.artifacts


class Pile(msgspec.Struct, frozen=True):
    """The supply: the equipment piles, the gold cards, the artifacts (by ``data.ARTIFACTS`` order)."""

    camel_drivers: int = data.EQUIPMENT_CARDS[data.DRIVERS]
    water_skins: int = data.EQUIPMENT_CARDS[data.WATER]
    goods: int = data.EQUIPMENT_CARDS[data.GOODS]
    ones: int = data.GOLD_ONES
    threes: int = data.GOLD_THREES
    artifacts: tuple[int, ...] = (data.ARTIFACT_CARDS,) * len(data.ARTIFACTS)


class Clue(msgspec.Struct, frozen=True):
    """Public: one of ``tiles`` (hex ids) is of ``kind`` (a face-down one when ``face_down``)."""

    seat: int
    round: int
    kind: str
    tiles: tuple[int, ...]
    face_down: bool = False


class Turn(msgspec.Struct, frozen=True):
    seat: int
    start: int | None  # the caravan's cell when the turn started
    from_desert: bool = False  # it started on a desert hex (a swap never changes that)
    path: tuple[int, ...] = ()  # cells entered, in order
    crossed: tuple[int, ...] = ()  # ids of the desert hexes entered, first entry order
    moved: bool = False  # the move is over
    token: bool = False  # a token was played this turn
    genie: int | None = None  # the genie's first cell, its second awaited
    back: str = MOVE  # the stage a genie's swap returns to
    traded: int = 0
    desert: bool = False  # the desert phase is owed and not settled yet
    adventures: bool = False  # a place was used (5.4 begun): no token any more (5.3 comes before it)
    home: bool = False  # the caravan came home this turn (``CameHome``), perhaps in the middle of its move


class State(msgspec.Struct, frozen=True):
    seats: int
    options: Options
    stage: str = SETUP
    board: tuple[int, ...] = tuple(c if data.AREA[c] != data.KNOWN else NO_HEX for c in data.CELLS)
    kinds: tuple[str, ...] = ("",) * len(data.CELLS)  # by hex id; secret (nobody's view shows it whole)
    face_up: tuple[int, ...] = ()  # hex ids, sorted
    players: tuple[Seat, ...] = ()
    supply: Pile = Pile()
    thief_left: tuple[int, ...] = data.THIEF_CARDS  # not turned yet
    thieves: int | None = None
    first: int | None = None
    active: int | None = None
    round: int = 0
    turn: Turn | None = None
    clues: tuple[Clue, ...] = ()
    ending: bool = False
    scores: tuple[SeatScore, ...] | None = None
    winners: tuple[int, ...] | None = None


# The newest revision of these rules (``Options.rules``; a game keeps the one it was created with). 2: the second
# reading of 2026-11-26 (``_revised``: a token before the adventures, a lost caravan's turn, passing through home).
RULES = 2


def check_options(seats: int, options: Options) -> None:
    if not 1 <= options.rules <= RULES:
        raise RuleViolation("bad_options", f"rules is a revision of these rules, 1 to {RULES}, not {options.rules}")


def _revised(state: State) -> bool:
    """Revision 2 (see ``RULES``); a game of revision 1 plays as the game landed, so that its record re-runs."""
    return state.options.rules >= 2


def initial_state(seats: int, options: Options) -> State:
    return State(seats=seats, options=options, players=tuple(Seat() for _ in range(seats)))


# --- small readers --------------------------------------------------------------------------------------

def is_desert(c: int) -> bool:
    return 0 <= c < len(data.CELLS) and data.AREA[c] != data.KNOWN


def hex_at(state: State, c: int) -> int:
    return state.board[c]


def cell_of(state: State) -> dict[int, int]:
    """Hex id -> the cell where it lies now."""
    return {t: c for c, t in enumerate(state.board) if t != NO_HEX}


def back(tile: int) -> str:
    """The colour of a hex's back: its sector (a hex's id is the cell of its sector it was laid on)."""
    return data.AREA[tile]


def face_down_cells(state: State) -> list[int]:
    up = set(state.face_up)
    return [c for c in data.DESERT_CELLS if state.board[c] not in up]


def complete(p: Seat) -> bool:
    return set(p.artifacts) == set(data.ARTIFACTS)


def crossed_of(state: State, kind: str) -> list[int]:
    """The hexes of ``kind`` the active caravan crossed this turn (the server knows)."""
    turn = state.turn
    return [] if turn is None else [t for t in turn.crossed if state.kinds[t] == kind]


def candidates(state: State, kind: str, face_down: bool = False) -> tuple[int, ...]:
    """What the others learn when a place of ``kind`` is used: the crossed hexes that may be it (face-down ones, and
    face-up ones of that kind unless ``face_down``)."""
    up = set(state.face_up)
    turn = state.turn
    assert turn is not None
    return tuple(sorted(t for t in turn.crossed
                        if t not in up or (not face_down and state.kinds[t] == kind)))


def cells_of(state: State, tiles: Sequence[int]) -> tuple[int, ...]:
    where = cell_of(state)
    return tuple(sorted(where[t] for t in tiles))


def magic_place(artifact: str) -> str:
    return next(place for place, a in data.ARTIFACT_AT.items() if a == artifact)


def trade_limit(state: State) -> int:
    """Goods the active seat may still trade this turn (the hand and the 1-gold cards aside): any number at a
    face-down city crossed, else 2 a turn at a face-up one, else none."""
    turn = state.turn
    assert turn is not None
    cities = crossed_of(state, data.CITY)
    if not cities:
        return 0
    up = set(state.face_up)
    if any(t not in up for t in cities):
        return data.HAND_LIMIT  # never more goods than that in hand
    return max(0, data.REVEALED_CITY_LIMIT - turn.traded)


# --- setup ----------------------------------------------------------------------------------------------

def setup(seats: int, options: Options, chance: Chance) -> list[Any]:
    events: list[Any] = [DesertLaid(sector=s, kinds=chance.shuffled(data.sector_tiles(s))) for s in data.SECTORS]
    events.append(FirstPlayerChosen(seat=chance.below(seats)))
    state = fold(initial_state(seats, options), events)
    return events + _start_round(state, chance)


def _start_round(state: State, chance: Chance) -> list[Any]:
    left = state.thief_left or data.THIEF_CARDS
    turned = ThiefTurned(round=state.round + 1, thieves=left[chance.below(len(left))],
                         reshuffled=not state.thief_left)
    state = evolve(state, turned)
    assert state.first is not None
    return [turned, *_start_turn(state, state.first, chance)]


def _start_turn(state: State, seat: int, chance: Chance) -> list[Any]:
    started = TurnStarted(seat=seat, round=state.round)
    if not state.players[seat].lost:
        return [started]
    if _revised(state):
        return [started, CaravanReplaced(seat=seat)]  # at home, no move: a token, artifacts bought, EndTurn
    events: list[Any] = [started, CaravanReplaced(seat=seat), TurnEnded(seat=seat)]  # revision 1: the turn is lost
    return events + _next(fold(state, events), chance)


def _next(state: State, chance: Chance) -> list[Any]:
    """After a turn ended: the next seat's turn, or a new round, or the end."""
    assert state.active is not None and state.first is not None
    seat = (state.active + 1) % state.seats
    if seat != state.first:
        return _start_turn(state, seat, chance)
    if any(complete(p) for p in state.players):
        return [_game_over(state)]
    return _start_round(state, chance)


def _game_over(state: State) -> GameOver:
    scores = tuple(SeatScore(gold=p.gold, artifacts=tuple(a for a in data.ARTIFACTS if a in p.artifacts))
                   for p in state.players)
    done = [i for i, p in enumerate(state.players) if complete(p)]
    best = max(state.players[i].gold for i in done)
    return GameOver(scores=scores, winners=tuple(i for i in done if state.players[i].gold == best))


def _end_turn(state: State, chance: Chance) -> list[Any]:
    assert state.active is not None
    ended = TurnEnded(seat=state.active)
    return [ended, *_next(evolve(state, ended), chance)]


# --- decide ---------------------------------------------------------------------------------------------

def decide(state: State, seat: int, command: Any, chance: Chance) -> list[Any]:
    if not 0 <= seat < state.seats:
        raise RuleViolation("no_such_seat", f"seats are numbered 0 to {state.seats - 1}")
    if state.stage == OVER:
        raise RuleViolation("game_over", "the game is over")
    if state.stage not in PLAYING or seat != state.active:
        raise RuleViolation("not_your_turn", f"it is seat {state.active}'s turn")
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise RuleViolation("unknown_command", f"{type(command).__name__} is not a command of 1001 Karawane")
    return handler(state, seat, command, chance)


def _stage(state: State, *stages: str, what: str) -> None:
    if state.stage not in stages:
        raise RuleViolation("wrong_phase", f"{what} (the turn is at its {state.stage} stage)")


def _equip(state: State, seat: int, command: Equip, chance: Chance) -> list[Any]:
    _stage(state, EQUIP, what="a caravan is equipped at home, at the start of its turn")
    counts = (command.camel_drivers, command.water_skins, command.goods)
    if min(counts) < 0:
        raise RuleViolation("bad_count", "take 0 or more cards of each kind")
    hand = state.players[seat].hand
    if hand.size + sum(counts) > data.HAND_LIMIT:
        raise RuleViolation("hand_full", f"a hand holds at most {data.HAND_LIMIT} cards (yours: {hand.size})")
    pile = state.supply
    for kind, n in zip(data.EQUIPMENT, counts):
        if n > getattr(pile, kind):
            raise RuleViolation("supply_empty", f"only {getattr(pile, kind)} {kind} cards are left")
    return [Equipped(seat=seat, cards=sum(counts), camel_drivers=counts[0], water_skins=counts[1], goods=counts[2])]


def _token_check(state: State, seat: int) -> None:
    _stage(state, MOVE, DESERT, HOME, AFTER, what="a token is played before or after the move, not during it")
    assert state.turn is not None
    if state.turn.token:
        raise RuleViolation("token_used", "one token a turn: before or after the move, not both")
    if state.turn.adventures and _revised(state):
        raise RuleViolation("too_late", "a token after the move comes before the adventures: a place was used")
    if state.players[seat].tokens <= 0:
        raise RuleViolation("no_token", "you have no token left")


def _face_down_hex(state: State, c: int) -> None:
    if not is_desert(c):
        raise RuleViolation("not_desert_hex", f"cell {c} is not a desert hex")
    if state.board[c] in state.face_up:
        raise RuleViolation("face_up", f"the hex at {c} is face up: no genie moves it, no map reveals it again")


def _play_genie(state: State, seat: int, command: PlayGenie, chance: Chance) -> list[Any]:
    _token_check(state, seat)
    _face_down_hex(state, command.hex)
    if len(face_down_cells(state)) < 2:
        raise RuleViolation("face_up", "fewer than two face-down hexes are left to swap")
    return [GenieSummoned(seat=seat, hex=command.hex)]


def _swap_with(state: State, seat: int, command: SwapWith, chance: Chance) -> list[Any]:
    _stage(state, GENIE, what="a genie swaps a second hex once the first is picked (PlayGenie)")
    turn = state.turn
    assert turn is not None and turn.genie is not None
    _face_down_hex(state, command.hex)
    if command.hex == turn.genie:
        raise RuleViolation("same_hex", "the genie swaps two different hexes")
    a, b = turn.genie, command.hex
    carried = tuple(i for i, p in enumerate(state.players) if p.cell in (a, b))
    return [HexesSwapped(seat=seat, a=a, b=b, carried=carried)]


def _play_map(state: State, seat: int, command: PlayMap, chance: Chance) -> list[Any]:
    _token_check(state, seat)
    _face_down_hex(state, command.hex)
    return [HexRevealed(seat=seat, hex=command.hex, kind=state.kinds[state.board[command.hex]])]


def _step(state: State, seat: int, command: Step, chance: Chance) -> list[Any]:
    _stage(state, MOVE, MOVING, what="the caravan moves before the rest of its turn")
    here = state.players[seat].cell
    assert here is not None and state.turn is not None
    if not 0 <= command.to < len(data.CELLS) or command.to not in data.NEIGHBOURS[here]:
        raise RuleViolation("not_adjacent", f"cell {command.to} is not next to the caravan's cell {here}")
    # passing through home: it came home when it reached it (5.5 « au moment où »), laid out before it leaves
    # (revision 1: only a move that ended at home came home)
    events: list[Any] = [*(_home_coming(state, seat) if _revised(state) else ()),
                         CaravanStepped(seat=seat, to=command.to)]
    tile = state.board[command.to]
    me = state.players[seat]
    if tile != NO_HEX and tile not in state.face_up and tile not in me.seen:
        events.append(HexLooked(seat=seat, hex=command.to, kind=state.kinds[tile]))
    if len(state.turn.path) + 1 >= data.MOVE:
        after = fold(state, events)
        events += _end_move(after, seat, chance)
    return events


def _stop(state: State, seat: int, command: StopMoving, chance: Chance) -> list[Any]:
    _stage(state, MOVE, MOVING, what="only a move under way is stopped")
    return _end_move(state, seat, chance)


def _end_move(state: State, seat: int, chance: Chance) -> list[Any]:
    turn = state.turn
    assert turn is not None
    desert = turn.from_desert or any(is_desert(c) for c in turn.path)
    events: list[Any] = [MoveEnded(seat=seat, desert=desert)]
    if not desert:
        events += _home_coming(fold(state, events), seat)
    return events


def _home_coming(state: State, seat: int) -> list[Any]:
    """The caravan came home (it entered home this turn, and stands there: at the end of its move, or before it
    leaves home again in the middle of it; once a turn): gold and artifacts laid out, equipment back; if the 1-gold
    cards have run out, laid-out 1-gold cards are exchanged for 3-gold ones (``_exchanges``)."""
    me = state.players[seat]
    turn = state.turn
    assert turn is not None
    if me.cell != data.HOME or not turn.path or turn.home:
        return []
    came = CameHome(seat=seat, gold=me.hand.gold, artifacts=me.hand.artifacts, returned=me.hand.equipment)
    return [came, *_exchanges(evolve(state, came))]  # gold laid out while the 1-gold cards are out: exchanged


def _desert(state: State) -> None:
    _stage(state, DESERT, what="places are used in the desert phase, after a move through the desert")


def _trade(state: State, seat: int, command: Trade, chance: Chance) -> list[Any]:
    _desert(state)
    if not crossed_of(state, data.CITY):
        raise RuleViolation("not_crossed", "your caravan crossed no desert city this turn")
    me = state.players[seat]
    n = command.goods
    if n < 1:
        raise RuleViolation("bad_count", "trade one goods card or more")
    if n > me.hand.goods:
        raise RuleViolation("no_goods", f"you hold {me.hand.goods} goods cards")
    if n > trade_limit(state):
        raise RuleViolation("city_limit", f"at face-up cities {data.REVEALED_CITY_LIMIT} goods a turn, no more")
    if n > state.supply.ones:
        raise RuleViolation("supply_empty", f"only {state.supply.ones} 1-gold cards are left")
    assert state.turn is not None
    face_down = state.turn.traded + n > data.REVEALED_CITY_LIMIT
    clue = cells_of(state, candidates(state, data.CITY, face_down))
    event = GoodsTraded(seat=seat, goods=n, clue=clue, face_down=face_down)
    return [event, *_exchanges(evolve(state, event))]


def _take_artifact(state: State, seat: int, command: TakeArtifact, chance: Chance) -> list[Any]:
    _desert(state)
    artifact = command.artifact
    if artifact not in data.ARTIFACTS:
        raise RuleViolation("no_such_artifact", f"the artifacts are {', '.join(data.ARTIFACTS)}")
    place = magic_place(artifact)
    if not crossed_of(state, place):
        raise RuleViolation("not_crossed", f"your caravan crossed no {place} this turn")
    me = state.players[seat]
    if me.owns(artifact):
        raise RuleViolation("has_artifact", f"you have a {artifact} already: one of each kind")
    if me.hand.size + 1 > data.HAND_LIMIT:
        raise RuleViolation("hand_full", f"a hand holds at most {data.HAND_LIMIT} cards")
    if state.supply.artifacts[ART_INDEX[artifact]] <= 0:
        raise RuleViolation("supply_empty", f"no {artifact} is left")
    return [ArtifactTaken(seat=seat, artifact=artifact, clue=cells_of(state, candidates(state, place)))]


def _buy(state: State, seat: int, count: int, place: str, pile: str) -> tuple[int, ...]:
    _desert(state)
    if not crossed_of(state, place):
        raise RuleViolation("not_crossed", f"your caravan crossed no {place} this turn")
    me = state.players[seat]
    if count < 1:
        raise RuleViolation("bad_count", "take one card or more")
    if me.hand.gold < 1:
        raise RuleViolation("no_gold", "it costs one gold card from your hand")
    if me.hand.size - 1 + count > data.HAND_LIMIT:
        raise RuleViolation("hand_full", f"a hand holds at most {data.HAND_LIMIT} cards")
    if count > getattr(state.supply, pile):
        raise RuleViolation("supply_empty", f"only {getattr(state.supply, pile)} {pile} cards are left")
    return cells_of(state, candidates(state, place))


def _buy_water(state: State, seat: int, command: BuyWater, chance: Chance) -> list[Any]:
    clue = _buy(state, seat, command.count, data.OASIS, data.WATER)
    return [WaterBought(seat=seat, count=command.count, clue=clue)]


def _hire(state: State, seat: int, command: HireDrivers, chance: Chance) -> list[Any]:
    clue = _buy(state, seat, command.count, data.CARAVANSERAI, data.DRIVERS)
    return [DriversHired(seat=seat, count=command.count, clue=clue)]


def water_options(state: State, seat: int) -> list[str | None]:
    hand = state.players[seat].hand
    out: list[str | None] = []
    if crossed_of(state, data.OASIS):
        out.append("oasis")
    if hand.water_skins:
        out.append("skin")
    else:
        out.append(None)  # no skin: the caravan may go without the oasis (keep it secret), and is lost
    return out


def guard_options(state: State, seat: int) -> list[str | None]:
    thieves = state.thieves or 0
    if thieves == 0:
        return ["clear"]
    drivers = state.players[seat].hand.camel_drivers
    out: list[str | None] = []
    if drivers > thieves:
        out.append("show")
    if drivers:
        out.append("driver")
    if crossed_of(state, data.CARAVANSERAI):
        out.append("caravanserai")
    if not drivers:
        out.append(None)
    return out


def _supply(state: State, seat: int, command: Supply, chance: Chance) -> list[Any]:
    _desert(state)
    me = state.players[seat]
    thieves = state.thieves or 0
    water, guard = command.water, command.thieves
    if water == "oasis" and not crossed_of(state, data.OASIS):
        raise RuleViolation("not_crossed", "your caravan crossed no oasis this turn")
    if water == "skin" and not me.hand.water_skins:
        raise RuleViolation("no_water", "you hold no water skin")
    if water is None and me.hand.water_skins:
        raise RuleViolation("must_pay", "without an oasis a water skin must be paid: you hold one")
    if guard == "clear" and thieves:
        raise RuleViolation("thieves_about", f"the thief card shows {thieves}: protect the caravan")
    if guard != "clear" and not thieves:
        raise RuleViolation("no_thieves", "the thief card shows no thief: nothing to protect against (clear)")
    if guard == "show" and me.hand.camel_drivers <= thieves:
        raise RuleViolation("too_few_drivers", f"show more camel drivers than the {thieves} thieves")
    if guard == "driver" and not me.hand.camel_drivers:
        raise RuleViolation("no_drivers", "you hold no camel driver")
    if guard == "caravanserai" and not crossed_of(state, data.CARAVANSERAI):
        raise RuleViolation("not_crossed", "your caravan crossed no caravanserai this turn")
    if guard is None and me.hand.camel_drivers:
        raise RuleViolation("must_pay", "a camel driver must be paid or shown: you hold one")
    if water is None or guard is None:
        lost = CaravanLost(seat=seat, cause="water" if water is None else "thieves", cards=me.hand.size)
        return [lost, *_end_turn(evolve(state, lost), chance)]
    event = CaravanSupplied(
        seat=seat, water=water, thieves=guard, shown=thieves + 1 if guard == "show" else 0,
        oasis_clue=cells_of(state, candidates(state, data.OASIS)) if water == "oasis" else (),
        caravanserai_clue=(cells_of(state, candidates(state, data.CARAVANSERAI)) if guard == "caravanserai"
                           else ()),
    )
    after = evolve(state, event)
    if after.stage == HOME:
        return [event, *_home_coming(after, seat)]
    return [event, *_end_turn(after, chance)]


def payment(p: Seat, supply: Pile) -> tuple[int, int, int] | None:
    """(ones, threes, change) paying 5 gold from what ``p`` laid out: exactly when it can (3+1+1, else 5 ones), else
    two 3-gold cards and one 1-gold card back (none if the supply has none); None: less than 5 gold."""
    if p.threes >= 1 and p.ones >= 2:
        return 2, 1, 0
    if p.ones >= data.ARTIFACT_PRICE:
        return data.ARTIFACT_PRICE, 0, 0
    if p.threes >= 2:
        return 0, 2, min(1, supply.ones)
    return None


def _buy_artifact(state: State, seat: int, command: BuyArtifact, chance: Chance) -> list[Any]:
    _stage(state, HOME, what="artifacts are bought at home, once the move ended there")
    artifact = command.artifact
    if artifact not in data.ARTIFACTS:
        raise RuleViolation("no_such_artifact", f"the artifacts are {', '.join(data.ARTIFACTS)}")
    me = state.players[seat]
    if me.owns(artifact):
        raise RuleViolation("has_artifact", f"you have a {artifact} already: one of each kind")
    if state.supply.artifacts[ART_INDEX[artifact]] <= 0:
        raise RuleViolation("supply_empty", f"no {artifact} is left")
    paid = payment(me, state.supply)
    if paid is None:
        raise RuleViolation("cannot_pay", f"an artifact costs {data.ARTIFACT_PRICE} gold; you laid out {me.gold}")
    event = ArtifactBought(seat=seat, artifact=artifact, ones=paid[0], threes=paid[1], change=paid[2])
    return [event, *_exchanges(evolve(state, event))]


def _end(state: State, seat: int, command: EndTurn, chance: Chance) -> list[Any]:
    _stage(state, HOME, AFTER, what="the desert phase ends with Supply; a move is ended first")
    return _end_turn(state, chance)


def _exchanges(state: State) -> list[Any]:
    """The 1-gold cards ran out: 3-gold cards replace laid-out 1-gold cards, three for one, seat by seat clockwise
    from the active one, as far as the 3-gold cards go. Checked whenever 1-gold cards leave the pile (a trade, the
    change of a purchase) or are laid out (coming home)."""
    if state.supply.ones > 0:
        return []
    events: list[Any] = []
    assert state.active is not None
    for k in range(state.seats):
        seat = (state.active + k) % state.seats
        n = min(state.players[seat].ones // 3, state.supply.threes)
        if n:
            event = GoldExchanged(seat=seat, threes=n)
            events.append(event)
            state = evolve(state, event)
    return events


_HANDLERS = {
    Equip: _equip, PlayGenie: _play_genie, SwapWith: _swap_with, PlayMap: _play_map, Step: _step, StopMoving: _stop,
    Trade: _trade, TakeArtifact: _take_artifact, BuyWater: _buy_water, HireDrivers: _hire, Supply: _supply,
    BuyArtifact: _buy_artifact, EndTurn: _end,
}


# --- evolve ---------------------------------------------------------------------------------------------

def _with(state: State, seat: int, **fields: Any) -> State:
    p = replace(state.players[seat], **fields)
    return replace(state, players=state.players[:seat] + (p,) + state.players[seat + 1:])


def _hand(state: State, seat: int, **deltas: Any) -> State:
    hand = state.players[seat].hand
    changes = {k: getattr(hand, k) + v for k, v in deltas.items()}
    return _with(state, seat, hand=replace(hand, **changes))


def _pile(state: State, **deltas: int) -> State:
    pile = state.supply
    return replace(state, supply=replace(pile, **{k: getattr(pile, k) + v for k, v in deltas.items()}))


def _artifact_pile(state: State, artifact: str, delta: int) -> State:
    counts = list(state.supply.artifacts)
    counts[ART_INDEX[artifact]] += delta
    return replace(state, supply=replace(state.supply, artifacts=tuple(counts)))


def _turn(state: State, **fields: Any) -> State:
    assert state.turn is not None
    return replace(state, turn=replace(state.turn, **fields))


def _clue(state: State, seat: int, kind: str, cells: Sequence[int], face_down: bool = False) -> State:
    tiles = tuple(sorted(state.board[c] for c in cells))
    return replace(state, clues=(*state.clues, Clue(seat, state.round, kind, tiles, face_down)))


def _after_move(state: State, seat: int) -> str:
    turn = state.turn
    assert turn is not None
    if turn.desert:
        return DESERT
    return HOME if state.players[seat].cell == data.HOME or turn.home else AFTER


def evolve(state: State, event: Any) -> State:
    kind = type(event)
    if kind is CaravanStepped:
        turn = state.turn
        assert turn is not None
        tile = state.board[event.to]
        crossed = turn.crossed if tile == NO_HEX or tile in turn.crossed else (*turn.crossed, tile)
        state = _with(state, event.seat, cell=event.to)
        return replace(state, stage=MOVING, turn=replace(turn, path=(*turn.path, event.to), crossed=crossed))
    if kind is HexLooked:
        tile = state.board[event.hex]
        seen = state.players[event.seat].seen
        return state if tile in seen else _with(state, event.seat, seen=tuple(sorted((*seen, tile))))
    if kind is DesertLaid:
        kinds = list(state.kinds)
        assert event.kinds is not None, "a redacted DesertLaid cannot be folded"
        for c, k in zip(data.SECTOR_CELLS[event.sector], event.kinds):
            kinds[c] = k
        return replace(state, kinds=tuple(kinds))
    if kind is FirstPlayerChosen:
        return replace(state, first=event.seat)
    if kind is ThiefTurned:
        left = list(data.THIEF_CARDS if event.reshuffled else state.thief_left)
        left.remove(event.thieves)
        return replace(state, round=event.round, thieves=event.thieves, thief_left=tuple(left))
    if kind is TurnStarted:
        p = state.players[event.seat]
        turn = Turn(seat=event.seat, start=p.cell, from_desert=p.cell is not None and is_desert(p.cell))
        stage = ENDED if p.lost else EQUIP if p.cell == data.HOME else MOVE
        return replace(state, active=event.seat, turn=turn, stage=stage)
    if kind is CaravanReplaced:  # the turn's move is lost: it goes on at home, moved (older streams end it at once)
        state = _with(state, event.seat, cell=data.HOME, lost=False)
        return replace(_turn(state, moved=True), stage=HOME)
    if kind is Equipped:
        assert event.camel_drivers is not None and event.water_skins is not None and event.goods is not None
        state = _hand(state, event.seat, camel_drivers=event.camel_drivers, water_skins=event.water_skins,
                      goods=event.goods)
        state = _pile(state, camel_drivers=-event.camel_drivers, water_skins=-event.water_skins,
                      goods=-event.goods)
        return replace(state, stage=MOVE)
    if kind is GenieSummoned:
        state = _with(state, event.seat, tokens=state.players[event.seat].tokens - 1)
        return replace(_turn(state, token=True, genie=event.hex, back=state.stage), stage=GENIE)
    if kind is HexesSwapped:
        board = list(state.board)
        board[event.a], board[event.b] = board[event.b], board[event.a]
        moved = {event.a: event.b, event.b: event.a}
        players = tuple(replace(p, cell=moved[p.cell]) if p.cell in moved else p for p in state.players)
        assert state.turn is not None
        back_to = state.turn.back
        return replace(_turn(state, genie=None), board=tuple(board), players=players, stage=back_to)
    if kind is HexRevealed:
        state = _with(state, event.seat, tokens=state.players[event.seat].tokens - 1)
        state = replace(state, face_up=tuple(sorted((*state.face_up, state.board[event.hex]))))
        return _turn(state, token=True)
    if kind is MoveEnded:
        state = _turn(state, moved=True, desert=event.desert)
        return replace(state, stage=_after_move(state, event.seat))
    if kind is GoodsTraded:
        state = _hand(state, event.seat, goods=-event.goods, gold=event.goods)
        state = _pile(state, goods=event.goods, ones=-event.goods)
        assert state.turn is not None
        state = _turn(state, traded=state.turn.traded + event.goods, adventures=True)
        return _clue(state, event.seat, data.CITY, event.clue, event.face_down)
    if kind is ArtifactTaken:
        hand = state.players[event.seat].hand
        state = _with(state, event.seat, hand=replace(hand, artifacts=(*hand.artifacts, event.artifact)))
        state = _turn(_artifact_pile(state, event.artifact, -1), adventures=True)
        return _clue(state, event.seat, magic_place(event.artifact), event.clue)
    if kind is WaterBought:
        state = _pile(_hand(state, event.seat, gold=-1, water_skins=event.count), ones=1, water_skins=-event.count)
        state = _turn(state, adventures=True)
        return _clue(state, event.seat, data.OASIS, event.clue)
    if kind is DriversHired:
        state = _hand(state, event.seat, gold=-1, camel_drivers=event.count)
        state = _pile(state, ones=1, camel_drivers=-event.count)
        state = _turn(state, adventures=True)
        return _clue(state, event.seat, data.CARAVANSERAI, event.clue)
    if kind is CaravanSupplied:
        if event.water == "skin":
            state = _pile(_hand(state, event.seat, water_skins=-1), water_skins=1)
        if event.thieves == "driver":
            state = _pile(_hand(state, event.seat, camel_drivers=-1), camel_drivers=1)
        if event.oasis_clue:
            state = _clue(state, event.seat, data.OASIS, event.oasis_clue)
        if event.caravanserai_clue:
            state = _clue(state, event.seat, data.CARAVANSERAI, event.caravanserai_clue)
        state = _turn(state, desert=False)
        return replace(state, stage=_after_move(state, event.seat))
    if kind is CaravanLost:
        hand = state.players[event.seat].hand
        state = _pile(state, camel_drivers=hand.camel_drivers, water_skins=hand.water_skins, goods=hand.goods,
                      ones=hand.gold)
        for artifact in hand.artifacts:
            state = _artifact_pile(state, artifact, 1)
        state = _with(state, event.seat, hand=Hand(), cell=None, lost=True)
        return replace(_turn(state, desert=False), stage=ENDED)
    if kind is CameHome:
        p = state.players[event.seat]
        hand = p.hand
        state = _pile(state, camel_drivers=hand.camel_drivers, water_skins=hand.water_skins, goods=hand.goods)
        state = _with(state, event.seat, hand=Hand(), ones=p.ones + hand.gold,
                      artifacts=(*p.artifacts, *hand.artifacts))
        state = _turn(state, home=True)  # the stage stays: home after a move that ended there, still moving if not
        return replace(state, ending=state.ending or complete(state.players[event.seat]))
    if kind is ArtifactBought:
        p = state.players[event.seat]
        state = _with(state, event.seat, ones=p.ones - event.ones + event.change, threes=p.threes - event.threes,
                      artifacts=(*p.artifacts, event.artifact))
        state = _pile(_artifact_pile(state, event.artifact, -1), ones=event.ones - event.change, threes=event.threes)
        return replace(state, ending=state.ending or complete(state.players[event.seat]))
    if kind is GoldExchanged:
        p = state.players[event.seat]
        state = _with(state, event.seat, ones=p.ones - 3 * event.threes, threes=p.threes + event.threes)
        return _pile(state, ones=3 * event.threes, threes=-event.threes)
    if kind is TurnEnded:
        return replace(state, stage=ENDED)
    if kind is GameOver:
        return replace(state, stage=OVER, scores=event.scores, winners=event.winners, turn=None)
    raise ValueError(f"not a 1001 Karawane event: {event!r}")


def fold(state: State, events: Sequence[Any]) -> State:
    for event in events:
        state = evolve(state, event)
    return state


# --- flow and legal commands ----------------------------------------------------------------------------

def awaiting(state: State) -> tuple[int, ...]:
    return (state.active,) if state.stage in PLAYING and state.active is not None else ()


def flow(state: State) -> Flow:
    return Flow(phase=state.stage, awaiting=awaiting(state), round=state.round, turn_seat=state.active)


def _tokens(state: State, seat: int) -> list[Any]:
    turn = state.turn
    assert turn is not None
    if turn.token or (turn.adventures and _revised(state)) or state.players[seat].tokens <= 0:
        return []
    down = face_down_cells(state)
    genies = [PlayGenie(hex=c) for c in down] if len(down) >= 2 else []
    return [PlayMap(hex=c) for c in down] + genies


def _steps(state: State, seat: int) -> list[Any]:
    here = state.players[seat].cell
    assert here is not None
    return [Step(to=c) for c in data.NEIGHBOURS[here]] + [StopMoving()]


def _equips(state: State, seat: int) -> list[Any]:
    room = data.HAND_LIMIT - state.players[seat].hand.size
    pile = state.supply
    return [Equip(camel_drivers=d, water_skins=w, goods=g)
            for d in range(min(room, pile.camel_drivers) + 1)
            for w in range(min(room - d, pile.water_skins) + 1)
            for g in range(min(room - d - w, pile.goods) + 1)]


def _desert_commands(state: State, seat: int) -> list[Any]:
    me = state.players[seat]
    out: list[Any] = []
    if crossed_of(state, data.CITY):
        most = min(me.hand.goods, trade_limit(state), state.supply.ones)
        out += [Trade(goods=n) for n in range(1, most + 1)]
    for artifact in data.ARTIFACTS:
        if (crossed_of(state, magic_place(artifact)) and not me.owns(artifact) and me.hand.size < data.HAND_LIMIT
                and state.supply.artifacts[ART_INDEX[artifact]] > 0):
            out.append(TakeArtifact(artifact=artifact))
    if me.hand.gold:
        room = data.HAND_LIMIT - me.hand.size + 1
        if crossed_of(state, data.OASIS):
            out += [BuyWater(count=n) for n in range(1, min(room, state.supply.water_skins) + 1)]
        if crossed_of(state, data.CARAVANSERAI):
            out += [HireDrivers(count=n) for n in range(1, min(room, state.supply.camel_drivers) + 1)]
    out += _tokens(state, seat)
    out += [Supply(water=w, thieves=g) for w in water_options(state, seat) for g in guard_options(state, seat)]  # type: ignore[arg-type]
    return out


def legal_commands(state: State, seat: int) -> list[Any]:
    if not 0 <= seat < state.seats or seat not in awaiting(state):
        return []
    stage = state.stage
    if stage == EQUIP:
        return _equips(state, seat)
    if stage == MOVE:
        return _steps(state, seat) + _tokens(state, seat)
    if stage == MOVING:
        return _steps(state, seat)
    if stage == GENIE:
        turn = state.turn
        assert turn is not None
        return [SwapWith(hex=c) for c in face_down_cells(state) if c != turn.genie]
    if stage == DESERT:
        return _desert_commands(state, seat)
    if stage == HOME:
        me = state.players[seat]
        buys = [BuyArtifact(artifact=a) for a in data.ARTIFACTS
                if not me.owns(a) and state.supply.artifacts[ART_INDEX[a]] > 0 and payment(me, state.supply)]
        return [*buys, EndTurn(), *_tokens(state, seat)]
    if stage == AFTER:
        return [EndTurn(), *_tokens(state, seat)]
    return []


def scores(state: State) -> tuple[int, ...]:
    """Each seat's points now (the table's ``scores`` hook): the gold it laid out at home, what the rules count at
    the end (gold still in a caravan's hand is not yet its own)."""
    return tuple(p.gold for p in state.players) if state.players else (0,) * state.seats


def result(state: State) -> Result | None:
    if state.stage != OVER or state.scores is None:
        return None
    details: dict[str, Any] = {"seats": msgspec.to_builtins(state.scores)}
    return Result(scores=tuple(s.gold for s in state.scores), winners=state.winners or (), details=details)
