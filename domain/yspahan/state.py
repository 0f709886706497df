"""Yspahan's state: frozen msgspec Structs, small integers inside, encodable as JSON."""

from __future__ import annotations

import msgspec

from contracts.yspahan import Options
from domain.yspahan import board, data

# A tower floor: (value, white dice, yellow dice); value 0 = empty.
EMPTY_FLOOR = (0, 0, 0)
EMPTY_TOWER = (EMPTY_FLOOR,) * len(data.FLOORS)

# Steps of a day. "setup" and "day_over" never wait for anyone: decide moves on at once.
SETUP, SUPPLY, ACTION, PLACE, MOVE, SHIP, BUILD, AFTER, DAY_OVER, OVER = (
    "setup", "supply", "action", "place", "move", "ship", "build", "after", "day_over", "over",
)  # fmt: skip


class PlayerState(msgspec.Struct, frozen=True):
    gold: int
    camels: int
    reserve: int  # goods cubes not on a shop, the caravan or a building
    score: int = 0
    buildings: tuple[str, ...] = ()  # in the order built
    hand: tuple[str, ...] = ()  # sorted


class State(msgspec.Struct, frozen=True):
    seats: int
    options: Options
    players: tuple[PlayerState, ...]
    gold_supply: int
    camel_supply: int
    deck: tuple[str, ...] = ()  # top first
    discard: tuple[str, ...] = ()
    shops: tuple[int, ...] = board.NO_CUBES  # owner seat per shop, -1 empty
    caravan: tuple[int, ...] = ()  # owner seat per filled camel, in the caravan's order
    supervisor: int = board.CENTRE
    week: int = 0
    day: int = 0
    order: tuple[int, ...] = ()  # the day's turns; order[0] rolls the dice
    turn: int = 0  # index into order
    step: str = SETUP
    tower: tuple[tuple[int, int, int], ...] = EMPTY_TOWER
    built: bool = False  # a building was built this turn
    quarter: int = 0  # PLACE: the quarter's floor
    cubes_left: int = 0  # PLACE
    move_value: int = 0  # MOVE
    ship_pending: tuple[int, ...] = ()  # SHIP: shops whose cube still goes to the caravan
    ship_shop: int = -1  # SHIP: the shop whose owner decides now; -1: the mover picks the next shop

    @property
    def current(self) -> int:
        return self.order[self.turn]

    @property
    def roller(self) -> int:
        return self.order[0]


def caravan_width(seats: int, options: Options) -> int:
    return data.CARAVAN_WIDTH.get(seats, options.caravan_width_2p)


def caravan_capacity(seats: int, options: Options) -> int:
    return caravan_width(seats, options) * data.CARAVAN_ROWS


def initial_state(seats: int, options: Options) -> State:
    players = tuple(PlayerState(gold=data.START_GOLD, camels=0, reserve=options.cubes_per_player) for _ in range(seats))
    return State(
        seats=seats,
        options=options,
        players=players,
        gold_supply=options.gold_in_box - data.START_GOLD * seats,
        camel_supply=options.camels_in_box,
    )
