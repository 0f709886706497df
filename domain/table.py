"""The table: the platform's decider around any game (create, seats, start, play, end).

The generic checks happen here, once, before a game's ``decide`` runs: the game exists, it is not over, the
seat's token is valid, the seat may act now, the command is one the seat may send now. Everything is pure:
the engine passes the chance source and the seat token's hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from contracts.readmodels import SeatInfo, TableView
from contracts.table import (
    CancelGame,
    CreateGame,
    Flow,
    GameCancelled,
    GameCreated,
    GameEnded,
    GameStarted,
    JoinSeat,
    LeaveSeat,
    Result,
    SeatJoined,
    SeatLeft,
)
from domain import text
from domain.chance import Chance, seed_hash
from domain.kernel import Game, RuleViolation, get_game

OPEN, PLAYING, OVER, CANCELLED = "open", "playing", "over", "cancelled"


class Player(msgspec.Struct, frozen=True):
    name: str
    token_hash: str


class Table(msgspec.Struct, frozen=True):
    """Everything the platform knows of one game: its header, its seats, and the game's own state."""

    game: str = ""
    title: str = ""
    seats: int = 0
    options: Any = None
    seed_hash: str = ""
    seed_chosen: bool = False
    creator_hash: str = ""
    invite_hash: str = ""
    rematch_of: str = ""
    players: tuple[Player | None, ...] = ()
    status: str = ""  # "" before GameCreated, then open / playing / over
    state: Any = None
    version: int = 0  # number of events folded
    result: Result | None = None

    @property
    def exists(self) -> bool:
        return self.status != ""


EMPTY = Table()


def game_of(table: Table) -> Game:
    game = get_game(table.game)
    if game is None:  # only a store holding a game this build does not know
        raise RuleViolation("unknown_game", f"this server does not know the game {table.game!r}")
    return game


def evolve(table: Table, event: Any) -> Table:
    version = table.version + 1
    if isinstance(event, GameCreated):
        game = get_game(event.game)
        assert game is not None
        options = stored_options(game, event.options)
        return msgspec.structs.replace(
            table,
            game=event.game,
            title=event.title,
            seats=event.seats,
            options=options,
            seed_hash=event.seed_hash,
            seed_chosen=event.seed_chosen,
            creator_hash=event.creator_hash,
            invite_hash=event.invite_hash,
            rematch_of=event.rematch_of,
            players=(None,) * event.seats,
            status=OPEN,
            state=game.initial_state(event.seats, options),
            version=version,
        )
    if isinstance(event, SeatJoined):
        players = list(table.players)
        players[event.seat] = Player(event.name, event.token_hash)
        return msgspec.structs.replace(table, players=tuple(players), version=version)
    if isinstance(event, SeatLeft):
        players = list(table.players)
        players[event.seat] = None
        return msgspec.structs.replace(table, players=tuple(players), version=version)
    if isinstance(event, GameStarted):
        return msgspec.structs.replace(table, status=PLAYING, version=version)
    if isinstance(event, GameCancelled):
        return msgspec.structs.replace(table, status=CANCELLED, version=version)
    if isinstance(event, GameEnded):
        result = Result(event.scores, event.winners, event.details)
        return msgspec.structs.replace(table, status=OVER, result=result, version=version)
    state = game_of(table).evolve(table.state, event)
    return msgspec.structs.replace(table, state=state, version=version)


def stored_options(game: Game, options: dict[str, Any]) -> Any:
    """The options of a stored game: an option this build no longer has is ignored (a new command is strict,
    a stored event stays readable)."""
    known = {f.name for f in msgspec.structs.fields(game.options_type)}
    return msgspec.convert({k: v for k, v in options.items() if k in known}, game.options_type)


def fold(events: Sequence[Any], table: Table = EMPTY) -> Table:
    for event in events:
        table = evolve(table, event)
    return table


def flow(table: Table) -> Flow:
    if table.status == OPEN:
        return Flow(phase="waiting_for_players")
    if table.status == OVER:
        return Flow(phase="over")
    if table.status == CANCELLED:
        return Flow(phase="cancelled")
    if table.status == PLAYING:
        return game_of(table).flow(table.state)
    return Flow(phase="absent")


def decide(
    table: Table,
    seat: int | None,
    token_hash: str | None,
    command: Any,
    chance: Chance,
) -> list[Any]:
    """Events for one command, or ``RuleViolation``. ``chance`` carries the game's seed."""
    if isinstance(command, CreateGame):
        return _create(table, command, chance)
    if not table.exists:
        raise RuleViolation("game_not_found", "there is no such game")
    if table.status == CANCELLED:
        raise RuleViolation("game_cancelled", "this game was cancelled before it started")
    if isinstance(command, JoinSeat):
        return _join(table, command, chance)
    if isinstance(command, CancelGame):
        return _cancel(table, seat, token_hash, command)
    if isinstance(command, LeaveSeat):
        return _leave(table, seat, token_hash)
    return _play(table, seat, token_hash, command, chance)


def _create(table: Table, command: CreateGame, chance: Chance) -> list[Any]:
    if table.exists:
        raise RuleViolation("game_exists", "a game with this id already exists")
    game = get_game(command.game)
    if game is None:
        raise RuleViolation("unknown_game", f"unknown game {command.game!r}")
    if not game.min_seats <= command.seats <= game.max_seats:
        raise RuleViolation(
            "bad_seat_count",
            f"{game.title} is played by {game.min_seats} to {game.max_seats} players, not {command.seats}",
        )
    title = text.title(command.title)
    try:
        options = msgspec.convert(command.options, game.options_type, strict=True)
    except msgspec.ValidationError as exc:
        raise RuleViolation("bad_options", f"invalid options for {game.title}: {exc}") from None
    chosen_seed(command)
    check = getattr(game, "check_options", None)
    if check is not None:
        check(command.seats, options)
    return [
        GameCreated(
            game=game.name,
            title=title,
            seats=command.seats,
            options=msgspec.to_builtins(options),
            seed_hash=seed_hash(chance.seed),
            seed_chosen=command.seed is not None,
            creator_hash=command.creator_hash,
            private=bool(command.invite_hash),
            invite_hash=command.invite_hash,
            rematch_of=command.rematch_of,
        )
    ]


SEED_BYTES = 32  # the length of the seeds the server draws; a chosen seed has the same


def chosen_seed(command: CreateGame) -> bytes | None:
    """The seed a CreateGame chooses, if any: exactly ``SEED_BYTES`` bytes in hex (a short seed would be found
    from its public hash by trying every value), else ``bad_seed``."""
    if command.seed is None:
        return None
    try:
        seed = bytes.fromhex(command.seed)
    except ValueError:
        seed = b""
    if len(seed) != SEED_BYTES:
        raise RuleViolation("bad_seed", f"a chosen seed is {SEED_BYTES} bytes: {2 * SEED_BYTES} hex digits")
    return seed


def _join(table: Table, command: JoinSeat, chance: Chance) -> list[Any]:
    if table.status != OPEN:
        raise RuleViolation("game_started", "every seat of this game is taken")
    if table.invite_hash and command.invite_hash != table.invite_hash:
        raise RuleViolation("bad_invite", "this game is private: join it with its invite code")
    name = text.name(command.name)
    free = [i for i, p in enumerate(table.players) if p is None]
    if command.seat is None:
        seat = free[0]
    elif not 0 <= command.seat < table.seats:
        raise RuleViolation("no_such_seat", f"seats are numbered 0 to {table.seats - 1}")
    elif command.seat not in free:
        raise RuleViolation("seat_taken", f"seat {command.seat} is taken")
    else:
        seat = command.seat
    events: list[Any] = [SeatJoined(seat=seat, name=name, token_hash=command.token_hash)]
    if len(free) == 1:
        events.append(GameStarted())
        events.extend(game_of(table).setup(table.seats, table.options, chance))
    return events


def _cancel(table: Table, seat: int | None, token_hash: str | None, command: CancelGame) -> list[Any]:
    """By the platform (no seat, no token: the engine's upkeep) or by the creator (its token, no seat)."""
    platform = token_hash is None
    creator = token_hash is not None and bool(table.creator_hash) and token_hash == table.creator_hash
    if seat is not None or not (platform or creator):
        raise RuleViolation("not_allowed", "only the game's creator (or the platform) may cancel it")
    if table.status != OPEN:
        raise RuleViolation("game_started", "only a game that has not started can be cancelled")
    return [GameCancelled(reason=command.reason if platform else "cancelled")]


def _check_token(table: Table, seat: int | None, token_hash: str | None) -> None:
    """The command names a seat of this game, taken by the holder of ``token_hash``."""
    if seat is None or not 0 <= seat < table.seats:
        raise RuleViolation("no_such_seat", "the command names no seat of this game")
    player = table.players[seat]
    if player is None or token_hash is None or player.token_hash != token_hash:
        raise RuleViolation("bad_token", "the seat token is not valid for this seat")


def _leave(table: Table, seat: int | None, token_hash: str | None) -> list[Any]:
    if table.status != OPEN:
        raise RuleViolation("game_started", "a seat is given back only before the game starts")
    _check_token(table, seat, token_hash)
    return [SeatLeft(seat)]


def _play(table: Table, seat: int | None, token_hash: str | None, command: Any, chance: Chance) -> list[Any]:
    if table.status == OPEN:
        raise RuleViolation("game_not_started", "the game starts when every seat is taken")
    if table.status == OVER:
        raise RuleViolation("game_over", "the game is over")
    _check_token(table, seat, token_hash)
    game = game_of(table)
    if seat not in game.flow(table.state).awaiting:
        raise RuleViolation("not_your_turn", "this seat has no decision to take now")
    events = list(game.decide(table.state, seat, command, chance))
    after = table.state
    for event in events:
        after = game.evolve(after, event)
    result = game.result(after)
    if result is not None:
        events.append(
            GameEnded(scores=result.scores, winners=result.winners, seed=chance.seed.hex(), details=result.details)
        )
    return events


def redact(table: Table, event: Any, seat: int | None) -> Any:
    """The event as ``seat`` may see it in the history: token hashes never, other secrets as the game says."""
    if isinstance(event, SeatJoined):
        return msgspec.structs.replace(event, token_hash="")
    if isinstance(event, GameCreated):  # the creator's and the invite's hashes are nobody's business
        if event.creator_hash or event.invite_hash:
            return msgspec.structs.replace(event, creator_hash="", invite_hash="")
        return event
    if isinstance(event, (GameStarted, GameEnded, GameCancelled, SeatLeft)):
        return event
    return game_of(table).redact(event, seat)


def seats_of(table: Table) -> tuple[SeatInfo, ...]:
    return tuple(SeatInfo(i, None if p is None else p.name) for i, p in enumerate(table.players))


def audiences(table: Table) -> tuple[int | None, ...]:
    """Every seat, then the spectator (None)."""
    return (*range(table.seats), None)


def views(table: Table, game_id: str) -> dict[int | None, TableView]:
    """What each seat and the spectator (None) see of the whole table: header, flow, legal commands, game view.

    The flow and the game's views are computed once for all; only awaited seats are asked for their legal
    commands (the others have none)."""
    game = game_of(table)
    now = flow(table)
    seats = seats_of(table)
    playing = table.status == PLAYING
    game_views = game.views(table.state) if table.status in (PLAYING, OVER) else {}
    return {
        seat: TableView(
            game_id=game_id,
            game=table.game,
            title=table.title,
            version=table.version,
            status=table.status,
            seat=seat,
            seats=seats,
            flow=now,
            legal=tuple(game.legal_commands(table.state, seat)) if playing and seat in now.awaiting else (),
            view=game_views.get(seat),
            result=table.result,
            seed_chosen=table.seed_chosen,
        )
        for seat in audiences(table)
    }
