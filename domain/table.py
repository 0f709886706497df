"""The table: the platform's decider around any game (create, seats, start, play, undo, end).

The generic checks happen here, once, before a game's ``decide`` runs: the game exists, it is not over, the
seat's token is valid, the seat may act now, the command is one the seat may send now. Everything is pure:
the engine passes the chance source and the seat token's hash.

Undo (issue #10; docs/rules-decisions.md, Undo) is the platform's too. The table keeps an undo *window*: the game
state after the last undo barrier (``domain.kernel.is_barrier``) and the live game events since, each with its
``Origin`` (the seat and the id of the command that produced it: the event envelope's ``seat`` and
``command_id``). ``UndoApplied(to_version)`` folds the window up to ``to_version`` again: the state is as it was
then, the events after it stay in the log (and in the hash chain) but no longer count. The window never reaches
back past a barrier, so it stays short (at most ``MAX_WINDOW`` events). Folding an ``UndoApplied`` needs no
origins; deciding a ``RequestUndo`` does (who made each event, where each command starts): a table folded
without them grants no undo.

``table_at`` is the table at any version from a snapshot (``encode_table``/``decode_table``) and the events after
it: the fold of the first N events, undos included (the kernel side of time travel).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Union

import msgspec

from contracts.readmodels import SeatInfo, TableView
from contracts.table import (
    CLOCK_EVENTS,
    CLOCK_TIMEOUT_POLICIES,
    TABLE_EVENTS,
    UNDO_EVENTS,
    UNDO_POLICIES,
    BOT_STRATEGIES,
    AcceptUndo,
    BotMoved,
    BotSeated,
    CancelGame,
    ClockOptions,
    ClocksSet,
    ClockView,
    CreateGame,
    DeclineUndo,
    Flow,
    ForkedFrom,
    GameCancelled,
    GameCreated,
    GameEnded,
    GameForked,
    GameStarted,
    GameTimer,
    JoinSeat,
    LeaveSeat,
    PlayFor,
    RequestUndo,
    Resign,
    Result,
    SeatAbsent,
    SeatBots,
    SeatClock,
    SeatClockView,
    SeatJoined,
    SeatLeft,
    SeatOut,
    SeatReturned,
    SeatTimedOut,
    Tick,
    Timeout,
    UndoAccepted,
    UndoApplied,
    UndoDeclined,
    UndoneRange,
    UndoRequest,
    UndoRequested,
    UndoView,
)
from domain import text
from domain.chance import ENTROPY_BYTES, SEED_BYTES, Chance, chance_hash, check_mix, seed_hash
from domain.kernel import Game, RuleViolation, get_game, is_barrier, rules_revision

OPEN, PLAYING, OVER, CANCELLED = "open", "playing", "over", "cancelled"
NO_UNDO, OWN_TURN, WITH_CONSENT = UNDO_POLICIES
BOT, ABSENT, FORFEIT = CLOCK_TIMEOUT_POLICIES
RESIGNED, FORFEITED = "resigned", "forfeited"  # SeatOut.reason
MAX_WINDOW = 256  # live game events an undo may go back over, at most (games have barriers long before)


class Player(msgspec.Struct, frozen=True):
    name: str
    token_hash: str
    entropy: str = ""  # its contribution to the game's chance (hex, public; "" none)
    bot: str = ""  # a seat the server's bot plays from the start (BotSeated): its strategy; no token then


class Origin(msgspec.Struct, frozen=True, array_like=True):
    """Who made an event: the seat of the command that produced it (None: the platform) and the command's id.
    The services pass it from the event's envelope (``seat``, ``command_id``)."""

    seat: int | None
    command: str


class Step(msgspec.Struct, frozen=True, array_like=True):
    """One game event of the undo window: its version, its origin (None: not known), the event (None for the
    window's anchor, which only marks where the window starts)."""

    version: int
    origin: Origin | None
    event: Any = None


class Window(msgspec.Struct, frozen=True):
    """The undo window: ``base`` is the game state once ``anchor`` (the last barrier, or the event that slid out
    of the window) was folded; ``steps`` are the live game events since, oldest first."""

    base: Any
    anchor: Step
    steps: tuple[Step, ...] = ()


class ClockMark(msgspec.Struct, frozen=True, array_like=True):
    """The clocks a ClocksSet set at ``version``: an undo puts back those in force where it takes the game."""

    version: int
    clocks: tuple[SeatClock, ...]
    timer: GameTimer | None = None


class Table(msgspec.Struct, frozen=True):
    """Everything the platform knows of one game: its header, its seats, and the game's own state."""

    game: str = ""
    title: str = ""
    seats: int = 0
    options: Any = None
    seed_hash: str = ""
    unfair: bool = False  # the creator chose the seed
    creator_hash: str = ""
    invite_hash: str = ""
    rematch_of: str = ""
    imported_from: str = ""
    forked_from: ForkedFrom | None = None  # a fork: its position (replayed after GameCreated) replaces the setup
    players: tuple[Player | None, ...] = ()
    mix: tuple[str, ...] = ()  # the seats' entropy the game's chance mixes, fixed at the start (``entropies``)
    status: str = ""  # "" before GameCreated, then open / playing / over
    state: Any = None
    version: int = 0  # number of events folded
    result: Result | None = None
    undo: str = OWN_TURN  # the undo policy
    window: Window | None = None  # what an undo may go back over (None: nothing, e.g. before the start)
    # The latest undo's range (none yet: empty): what the views show. Every undo's is in the log
    # (``undone_ranges``); keeping them all here made every view, push and fold grow with each undo (issue #18).
    undone: tuple[UndoneRange, ...] = ()
    request: UndoRequest | None = None  # an undo request waiting for the other seats' answers
    # Clocks, leaving and bots (issue #19; docs/rules-decisions.md, Clocks). All of it comes from the table's
    # events (GameCreated.clock, ClocksSet, SeatTimedOut, SeatAbsent, SeatReturned, SeatOut): the fold alone
    # gives it, so a snapshot, a re-run and the engine's cache agree.
    clock: ClockOptions | None = None  # the clock options given at creation (None: none)
    clocks: tuple[SeatClock, ...] = ()  # per seat, as the latest ClocksSet set them (): none yet
    # Per seat, the instant its running clock started (its decision began): deadline - per_decision - reserve
    clock_since: tuple[float, ...] = ()
    clock_at: float = 0.0  # the latest ClocksSet's instant
    timer: GameTimer | None = None  # the game's own timer (its ``timer`` hook), as the latest ClocksSet set it
    absent: tuple[int, ...] = ()  # seats timed out under the policy "absent": a bot plays until they come back
    out: tuple[str, ...] = ()  # per seat, "" or why it is out of the game for good (SeatOut.reason); (): nobody
    # Per seat, the deadline it timed out on under the policy "bot" (None: none): while it is still the seat's
    # deadline, a bot may play that decision for it (``stood_in``). (): nobody
    timed_out: tuple[float | None, ...] = ()
    # The clocks set inside the undo window (and the last before it), oldest first: an undo puts back the ones in
    # force at the version it goes back to, so moving and taking the move back never gives a seat time.
    clock_marks: tuple[ClockMark, ...] = ()

    @property
    def exists(self) -> bool:
        return self.status != ""


EMPTY = Table()


def game_of(table: Table) -> Game:
    game = get_game(table.game)
    if game is None:  # only a store holding a game this build does not know
        raise RuleViolation("unknown_game", f"this server does not know the game {table.game!r}")
    return game


def evolve(table: Table, event: Any, origin: Origin | None = None) -> Table:
    """The table once ``event`` is folded. ``origin``: who made it (from its envelope); only deciding an undo
    needs it, the state never depends on it."""
    if type(event) not in _TABLE_EVENT_TYPES:  # the hot path: a game's event
        return _evolve_game(table, event, origin)
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
            unfair=event.unfair,
            creator_hash=event.creator_hash,
            invite_hash=event.invite_hash,
            rematch_of=event.rematch_of,
            imported_from=event.imported_from,
            players=(None,) * event.seats,
            status=OPEN,
            state=game.initial_state(event.seats, options),
            version=version,
            undo=event.undo,
            clock=event.clock or None,  # UNSET: none given
        )
    if isinstance(event, GameForked):
        return msgspec.structs.replace(table, forked_from=event.source, version=version)
    if isinstance(event, SeatJoined):
        players = list(table.players)
        players[event.seat] = Player(event.name, event.token_hash, event.entropy)
        return msgspec.structs.replace(table, players=tuple(players), version=version)
    if isinstance(event, BotSeated):
        players = list(table.players)
        players[event.seat] = Player(event.name, "", bot=event.strategy)
        return msgspec.structs.replace(table, players=tuple(players), version=version)
    if isinstance(event, SeatLeft):
        players = list(table.players)
        players[event.seat] = None
        return msgspec.structs.replace(table, players=tuple(players), version=version)
    if isinstance(event, GameStarted):  # a barrier: the game's setup (shuffles, first player) follows
        window = None if table.undo == NO_UNDO else Window(table.state, Step(version, origin))
        return msgspec.structs.replace(table, status=PLAYING, version=version, window=window, mix=entropies(table))
    if isinstance(event, GameCancelled):
        return msgspec.structs.replace(table, status=CANCELLED, version=version)
    if isinstance(event, GameEnded):  # reveals the seed: nothing is undone after the end
        result = Result(event.scores, event.winners, event.details)
        return msgspec.structs.replace(table, status=OVER, result=result, version=version, window=None,
                                       request=None)
    if isinstance(event, _CLOCK_EVENT_TYPES):
        return _evolve_clock(table, event, version, origin)
    return _evolve_undo(table, event, version)


def _evolve_game(table: Table, event: Any, origin: Origin | None) -> Table:
    version = table.version + 1
    game = game_of(table)
    state = game.evolve(table.state, event)
    window = table.window
    if window is None:  # before the start, or a table without undo
        if table.request is None:
            return msgspec.structs.replace(table, state=state, version=version)
        return msgspec.structs.replace(table, state=state, version=version, request=None)
    if is_barrier(game, event):
        window = Window(state, Step(version, origin))
    else:
        steps = (*window.steps, Step(version, origin, event))
        if len(steps) > MAX_WINDOW:  # the oldest event leaves the window: no undo goes back before it now
            oldest = steps[0]
            window = Window(game.evolve(window.base, oldest.event), Step(oldest.version, oldest.origin), steps[1:])
        else:
            window = Window(window.base, window.anchor, steps)
    if table.request is None:  # a game event ends a pending undo request
        return msgspec.structs.replace(table, state=state, version=version, window=window)
    return msgspec.structs.replace(table, state=state, version=version, window=window, request=None)


def _evolve_undo(table: Table, event: Any, version: int) -> Table:
    if isinstance(event, UndoRequested):
        request = UndoRequest(event.seat, event.to_version, event.asked)
        return msgspec.structs.replace(table, version=version, request=request)
    if isinstance(event, UndoAccepted):
        request = table.request
        if request is not None:
            request = msgspec.structs.replace(request, accepted=(*request.accepted, event.seat))
        return msgspec.structs.replace(table, version=version, request=request)
    if isinstance(event, UndoDeclined):
        return msgspec.structs.replace(table, version=version, request=None)
    # UndoApplied: the state again as it was at to_version, folded from the window's base
    window = table.window
    if window is None or not window.anchor.version <= event.to_version < version:
        raise ValueError(f"UndoApplied to version {event.to_version} is outside the undo window")
    game = game_of(table)
    state = window.base
    kept = tuple(step for step in window.steps if step.version <= event.to_version)
    for step in kept:
        state = game.evolve(state, step.event)
    undone = UndoneRange(event.to_version + 1, version - 1, event.by_seat)
    return msgspec.structs.replace(table, state=state, version=version, request=None,
                                   window=Window(window.base, window.anchor, kept), undone=(undone,))


def undone_ranges(events: Sequence[Any], first_version: int = 1) -> list[UndoneRange]:
    """Every undo's range, oldest first, from a game's events (``events[i]`` is the event at version
    ``first_version + i``): what the table keeps only the latest of (``Table.undone``). The history reads them."""
    return [UndoneRange(event.to_version + 1, version - 1, event.by_seat)
            for version, event in enumerate(events, start=first_version) if isinstance(event, UndoApplied)]


def newest_rules(command: CreateGame) -> CreateGame:
    """A new game's CreateGame naming the newest revision of its title's rules when it names none (the engine
    applies it before deciding and storing the command: a re-run of the stored command keeps the revision)."""
    game = get_game(command.game)
    revision = rules_revision(game) if game is not None else None
    if revision is None or "rules" in command.options:
        return command
    return msgspec.structs.replace(command, options={**command.options, "rules": revision})


def stored_options(game: Game, options: dict[str, Any]) -> Any:
    """The options of a stored game: an option this build no longer has is ignored (a new command is strict,
    a stored event stays readable)."""
    known = {f.name for f in msgspec.structs.fields(game.options_type)}
    return msgspec.convert({k: v for k, v in options.items() if k in known}, game.options_type)


def fold(events: Sequence[Any], table: Table = EMPTY, origins: Sequence[Origin | None] | None = None) -> Table:
    """``events`` folded into ``table``; ``origins`` (one per event, from the envelopes) let it decide undos."""
    if origins is None:
        for event in events:
            table = evolve(table, event)
        return table
    if len(origins) != len(events):
        raise ValueError(f"{len(events)} events but {len(origins)} origins")
    for event, origin in zip(events, origins):
        table = evolve(table, event, origin)
    return table


def table_at(version: int, events: Sequence[Any], snapshot: Table = EMPTY,
             origins: Sequence[Origin | None] | None = None) -> Table:
    """The table at ``version``: ``snapshot`` (a table at version S <= ``version``; EMPTY: from the start) with the
    events after it folded up to ``version``. ``events[i]`` (and ``origins[i]``) is the event at version S + 1 + i.
    Equal to the fold of the game's first ``version`` events, undos included."""
    start = snapshot.version
    if not start <= version <= start + len(events):
        raise ValueError(f"version {version} is not between the snapshot's {start} and {start + len(events)}")
    count = version - start
    return fold(events[:count], snapshot, None if origins is None else origins[:count])


_table_encoder = msgspec.msgpack.Encoder()


class _Head(msgspec.Struct):
    game: str = ""


_head_decoder = msgspec.msgpack.Decoder(_Head)
_empty_decoder = msgspec.msgpack.Decoder(Table)


def encode_table(table: Table) -> bytes:
    """A snapshot of the table (msgpack), for ``decode_table``."""
    return _table_encoder.encode(table)


def decode_table(raw: bytes) -> Table:
    """The table of ``encode_table``: its game's options, state and window events typed again (one decoder per
    game, built once: the Table's own fields typed with the game's types)."""
    name = _head_decoder.decode(raw).game
    if not name:
        return _empty_decoder.decode(raw)
    typed = _snapshot_decoder(name).decode(raw)
    fields = {f: getattr(typed, f) for f in typed.__struct_fields__}
    window = typed.window
    if window is not None:
        fields["window"] = Window(window.base, Step(window.anchor.version, window.anchor.origin),
                                 tuple(Step(s.version, s.origin, s.event) for s in window.steps))
    return Table(**fields)


@cache
def _snapshot_decoder(name: str) -> msgspec.msgpack.Decoder:
    game = get_game(name)
    if game is None:
        raise RuleViolation("unknown_game", f"this server does not know the game {name!r}")
    state = type(game.initial_state(game.min_seats, game.options_type()))
    event = Union[tuple(game.event_types)]  # type: ignore[valid-type]  # noqa: UP007
    step = msgspec.defstruct(f"{name}Step", [("version", int), ("origin", Origin | None),
                                             ("event", event | None, None)], array_like=True)
    window = msgspec.defstruct(f"{name}Window", [("base", state), ("anchor", step), ("steps", tuple[step, ...], ())])
    types = {"options": game.options_type, "state": state | None, "window": window | None}
    fields = [(f.name, types.get(f.name, f.type), f.default) for f in msgspec.structs.fields(Table)]  # all default
    return msgspec.msgpack.Decoder(msgspec.defstruct(f"{name}Table", fields))


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
    now: float = 0.0,
) -> list[Any]:
    """Events for one command, or ``RuleViolation``. ``chance`` carries the server's seed of the game; every draw
    after the start is from it mixed with the seats' entropy (``domain.chance.game_seed``). ``now`` is the engine's
    clock at this command (the ``recorded_at`` of its events; a record's re-run passes it again): the only time the
    rules know. A table with clocks or a game timer ends the command's events with ``ClocksSet`` when they changed.
    """
    if isinstance(command, CreateGame):
        return _create(table, command, chance)
    if not table.exists:
        raise RuleViolation("game_not_found", "there is no such game")
    if table.status == CANCELLED:
        raise RuleViolation("game_cancelled", "this game was cancelled before it started")
    if isinstance(command, JoinSeat):
        return _with_clocks(table, _join(table, command, chance), None, now)
    if isinstance(command, SeatBots):
        if seat is not None or token_hash is not None:
            raise RuleViolation("not_allowed", "bots take seats for no seat and with no token")
        return _with_clocks(table, _seat_bots(table, command, chance), None, now)
    if isinstance(command, CancelGame):
        return _cancel(table, seat, token_hash, command)
    if isinstance(command, LeaveSeat) and table.status == OPEN:
        return _leave(table, seat, token_hash)
    if isinstance(command, (Timeout, Tick, PlayFor)):
        return _platform(table, seat, token_hash, command, chance, now)
    if isinstance(command, (LeaveSeat, Resign)):  # a LeaveSeat after the start resigns
        return _with_clocks(table, _resign(table, seat, token_hash, chance), None, now)
    _check_playing(table)
    _check_token(table, seat, token_hash)
    assert seat is not None
    if out_reason(table, seat):
        raise RuleViolation("seat_out", f"seat {seat} is out of the game ({out_reason(table, seat)}): bots play it")
    mover = None if isinstance(command, (RequestUndo, AcceptUndo, DeclineUndo)) else seat
    if seat not in table.absent:
        return _with_clocks(table, _seat_command(table, seat, token_hash, command, chance), mover, now)
    # An absent seat comes back with any command of its token: SeatReturned first, then the command's events. A
    # command the rules refuse still brings it back (its only way back while it is not awaited: a bot plays its
    # decisions at once); the command itself is not played (docs/rules-decisions.md, Clocks).
    returned = evolve(table, SeatReturned(seat))
    try:
        events = _seat_command(returned, seat, token_hash, command, chance)
    except RuleViolation:
        events, mover = [], None
    return _with_clocks(table, [SeatReturned(seat), *events], mover, now)


def _seat_command(table: Table, seat: int, token_hash: str | None, command: Any, chance: Chance) -> list[Any]:
    if isinstance(command, (RequestUndo, AcceptUndo, DeclineUndo)):
        return _undo(table, seat, token_hash, command)
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
    game_options = dict(command.options)
    undo = game_options.pop("undo", OWN_TURN)
    if not isinstance(undo, str) or undo not in UNDO_POLICIES:
        raise RuleViolation("bad_undo_policy", f"the option undo is one of {', '.join(UNDO_POLICIES)}, not {undo!r}")
    clock = clock_options(game_options.pop("clock", None))
    try:
        options = msgspec.convert(game_options, game.options_type, strict=True)
    except msgspec.ValidationError as exc:
        raise RuleViolation("bad_options", f"invalid options for {game.title}: {exc}") from None
    chosen_seed(command)
    check = getattr(game, "check_options", None)
    if check is not None:
        check(command.seats, options)
    position = [] if command.fork is None else _position(game, command, options)
    return [
        GameCreated(
            game=game.name,
            title=title,
            seats=command.seats,
            options=msgspec.to_builtins(options),
            seed_hash=seed_hash(chance.seed),
            unfair=command.unfair,
            creator_hash=command.creator_hash,
            private=bool(command.invite_hash),
            invite_hash=command.invite_hash,
            rematch_of=command.rematch_of,
            undo=undo,
            imported_from=command.imported_from,
            clock=msgspec.UNSET if clock is None else clock,  # none: GameCreated's bytes as before clocks
        ),
        *([] if command.fork is None else [GameForked(command.fork.source), *position]),
    ]


def _position(game: Game, command: CreateGame, options: Any) -> list[Any]:
    """A fork's position: its game events typed (``bad_fork`` if one is not an event of this game, or if they
    do not fold), and a game still to play once they are folded (``position_over``)."""
    fork = command.fork
    assert fork is not None
    try:
        events = msgspec.convert(fork.events, tuple[Union[tuple(game.event_types)], ...])  # noqa: UP007
        state = game.initial_state(command.seats, options)
        for event in events:
            state = game.evolve(state, event)
    except (msgspec.ValidationError, TypeError, ValueError, KeyError, IndexError) as exc:
        raise RuleViolation("bad_fork", f"the fork's position is not a position of {game.title}: {exc}") from None
    if not events:
        raise RuleViolation("bad_fork", "a fork starts from a position of a game that started: no game event given")
    if game.result(state) is not None:
        raise RuleViolation("position_over", f"the game is over at version {fork.source.version}: nothing to play")
    return list(events)


def chosen_seed(command: CreateGame) -> bytes | None:
    """The seed a CreateGame chooses, if any: only with ``unfair`` (``seed_needs_unfair``: whoever chose it knows
    every outcome), exactly ``SEED_BYTES`` bytes in hex (a short seed would be found from its public hash by
    trying every value), else ``bad_seed``."""
    if command.seed is None:
        return None
    if not command.unfair:
        raise RuleViolation(
            "seed_needs_unfair",
            'a game created with a seed is not fair (its creator knows every shuffle and roll): add "unfair": true'
            " to the CreateGame body beside the seed (SDK: create(..., seed=..., unfair=True)); the lobby and the"
            " views then show it")
    return _hex_of(command.seed, SEED_BYTES, "bad_seed",
                   f"a chosen seed is {SEED_BYTES} bytes: {2 * SEED_BYTES} hex digits")


def entropy_of(command: JoinSeat) -> str:
    """A seat's entropy as the table keeps it (lowercase hex), if any: ``ENTROPY_BYTES`` bytes in hex, else
    ``bad_entropy``."""
    if not command.entropy:
        return ""
    return _hex_of(command.entropy, ENTROPY_BYTES, "bad_entropy",
                   f"a seat's entropy is {ENTROPY_BYTES} random bytes: {2 * ENTROPY_BYTES} hex digits (or none)").hex()


def _hex_of(text: str, size: int, code: str, message: str) -> bytes:
    """The ``size`` bytes ``text`` spells in hex, else ``RuleViolation(code, message)``."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) != size:
        raise RuleViolation(code, message)
    return raw


def entropies(table: Table) -> tuple[str, ...]:
    """Every seat's entropy in seat order ("" for a seat that gave none, or is free): what the game's chance
    mixes with the server's seed (``domain.chance.game_seed``)."""
    return tuple(p.entropy if p is not None else "" for p in table.players)


def check_chance(events: Sequence[Any], server_seed: bytes) -> list[str]:
    """The problems (none: it holds) of a game's chance, from its events and its server seed (revealed by
    GameEnded): the seed against GameCreated's commitment, and the game's seed it gives, mixed with the entropy of
    the seats taken at the start (their SeatJoined), against GameStarted's commitment."""
    if not events or not isinstance(events[0], GameCreated):
        return ["the events do not begin with GameCreated"]
    table = EMPTY
    for event in events:
        if isinstance(event, GameStarted):
            return check_mix(server_seed, table.seed_hash, entropies(table), event.chance_hash)
        table = evolve(table, event)
    return check_mix(server_seed, table.seed_hash, (), "")  # never started: only the commitment


def _join(table: Table, command: JoinSeat, chance: Chance) -> list[Any]:
    if table.status != OPEN:
        raise RuleViolation("game_started", "every seat of this game is taken")
    if table.invite_hash and command.invite_hash != table.invite_hash:
        raise RuleViolation("bad_invite", "this game is private: join it with its invite code")
    name = text.name(command.name)
    entropy = entropy_of(command)
    free = [i for i, p in enumerate(table.players) if p is None]
    if command.seat is None:
        seat = free[0]
    elif not 0 <= command.seat < table.seats:
        raise RuleViolation("no_such_seat", f"seats are numbered 0 to {table.seats - 1}")
    elif command.seat not in free:
        raise RuleViolation("seat_taken", f"seat {command.seat} is taken")
    else:
        seat = command.seat
    events: list[Any] = [SeatJoined(seat=seat, name=name, token_hash=command.token_hash, entropy=entropy)]
    return events + _start_if_full(table, events, chance)


def _start_if_full(table: Table, taken: list[Any], chance: Chance) -> list[Any]:
    """GameStarted and the game's setup when ``taken`` (the seats a command takes, on ``table``) fill the last
    free seats: the game's chance is fixed now, the server's seed mixed with every seat's entropy."""
    after = fold(taken, table)
    if any(p is None for p in after.players):
        return []
    mix = entropies(after)
    events: list[Any] = [GameStarted(chance_hash=chance_hash(chance.seed, mix))]
    if table.forked_from is None:  # a fork starts from its position, already folded
        events.extend(game_of(table).setup(table.seats, table.options, chance.mixed(mix)))
    return events


def bot_name(seat: int) -> str:
    """The name a seat taken by the server's bots shows (``BotSeated.name``)."""
    return f"bot {seat + 1}"


def _seat_bots(table: Table, command: SeatBots, chance: Chance) -> list[Any]:
    """Free seats taken by the server's bots (every free one when ``command.seats`` is None): ``BotSeated`` each,
    in seat order, then the start when they fill the table. The same refusals as a join's, and a strategy the
    server does not have (``unknown_strategy``)."""
    if table.status != OPEN:
        raise RuleViolation("game_started", "bots take seats only before the game starts")
    if table.invite_hash and command.invite_hash != table.invite_hash:
        raise RuleViolation("bad_invite", "this game is private: fill its seats with its invite code")
    if command.strategy not in BOT_STRATEGIES:
        raise RuleViolation("unknown_strategy",
                            f"the bots' strategies are {', '.join(BOT_STRATEGIES)}, not {command.strategy!r}")
    free = [i for i, p in enumerate(table.players) if p is None]
    if command.seats is None:
        seats = free
    else:
        if not command.seats:
            raise RuleViolation("bad_seats", "name at least one seat (or none at all: every free seat)")
        if len(set(command.seats)) != len(command.seats):
            raise RuleViolation("bad_seats", "a seat is named twice")
        for seat in command.seats:
            if not 0 <= seat < table.seats:
                raise RuleViolation("no_such_seat", f"seats are numbered 0 to {table.seats - 1}")
            if seat not in free:
                raise RuleViolation("seat_taken", f"seat {seat} is taken")
        seats = sorted(command.seats)
    events: list[Any] = [BotSeated(seat, bot_name(seat), command.strategy) for seat in seats]
    return events + _start_if_full(table, events, chance)


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
    if player is None or token_hash is None or not player.token_hash or player.token_hash != token_hash:
        raise RuleViolation("bad_token", "the seat token is not valid for this seat")  # a bot's seat has none


def _leave(table: Table, seat: int | None, token_hash: str | None) -> list[Any]:
    if table.status != OPEN:
        raise RuleViolation("game_started", "a seat is given back only before the game starts")
    _check_token(table, seat, token_hash)
    return [SeatLeft(seat)]


def _check_playing(table: Table) -> None:
    if table.status == OPEN:
        raise RuleViolation("game_not_started", "the game starts when every seat is taken")
    if table.status == OVER:
        raise RuleViolation("game_over", "the game is over")


def _play(table: Table, seat: int | None, token_hash: str | None, command: Any, chance: Chance) -> list[Any]:
    _check_playing(table)
    _check_token(table, seat, token_hash)
    game = game_of(table)
    if seat not in game.flow(table.state).awaiting:
        raise RuleViolation("not_your_turn", "this seat has no decision to take now")
    return _played(table, list(game.decide(table.state, seat, command, chance.mixed(table.mix))), chance)


def _played(table: Table, events: list[Any], chance: Chance) -> list[Any]:
    """The game's ``events`` on ``table``, then GameEnded when they end the game."""
    game = game_of(table)
    after = table.state
    for event in events:
        after = game.evolve(after, event)
    result = game.result(after)
    if result is not None:
        events.append(_game_ended(table, result, chance))
    return events


def _game_ended(table: Table, result: Result, chance: Chance) -> GameEnded:
    """The end of a game the rules ended: the winners are the game's that are still in it; if none is, the
    best-scored seats still in it (docs/rules-decisions.md, Clocks). A game with nobody out ends as before."""
    out = _out_map(table)
    if not out:
        return GameEnded(scores=result.scores, winners=result.winners, seed=chance.seed.hex(), details=result.details)
    winners = tuple(s for s in result.winners if not out_reason(table, s))
    if not winners:
        left = [s for s in range(table.seats) if not out_reason(table, s)]
        best = max(result.scores[s] for s in left)
        winners = tuple(s for s in left if result.scores[s] == best)
    return GameEnded(scores=result.scores, winners=winners, seed=chance.seed.hex(),
                     details={**result.details, "out": out})


# --- undo ---------------------------------------------------------------------------------------------------

_TABLE_EVENT_TYPES = frozenset(TABLE_EVENTS)


def _undo(table: Table, seat: int | None, token_hash: str | None, command: Any) -> list[Any]:
    if table.status == OPEN:
        raise RuleViolation("game_not_started", "the game starts when every seat is taken")
    if table.status == OVER:
        raise RuleViolation("game_over", "the game is over")
    _check_token(table, seat, token_hash)
    assert seat is not None
    if isinstance(command, RequestUndo):
        return _request_undo(table, seat, command.to_version)
    request = table.request
    if request is None:
        raise RuleViolation("no_undo_request", "no undo request is waiting for an answer")
    if isinstance(command, DeclineUndo) and seat == request.seat:
        return [UndoDeclined(seat)]  # the requester withdraws
    if seat not in request.asked:
        raise RuleViolation("not_asked", "this seat is not asked to answer the undo request")
    if seat in request.accepted:
        raise RuleViolation("already_answered", "this seat already accepted the undo request")
    if isinstance(command, DeclineUndo):
        return [UndoDeclined(seat)]
    if set(request.asked) - {*request.accepted, seat}:
        return [UndoAccepted(seat)]
    return [UndoAccepted(seat), UndoApplied(request.to_version, request.seat)]


def _request_undo(table: Table, seat: int, to_version: int) -> list[Any]:
    if table.undo == NO_UNDO:
        raise RuleViolation("undo_not_allowed", "this table's policy is undo: none")
    if table.request is not None:
        raise RuleViolation("undo_pending", "an undo request is waiting for answers: it ends when they are given")
    window = table.window
    if window is None or not window.steps:
        raise RuleViolation("undo_not_allowed", "nothing can be undone now (no move since the last barrier)")
    if to_version >= window.steps[-1].version or to_version < 0:
        raise RuleViolation("bad_undo_version", f"no move after version {to_version} to undo")
    if to_version < window.anchor.version:
        raise RuleViolation(
            "undo_not_allowed",
            f"version {to_version} is before version {window.anchor.version}, a chance outcome or something a seat"
            " was shown (or further back than the platform keeps): no undo goes back over it",
        )
    after = _after(window, to_version)
    if after is None:
        raise RuleViolation("bad_undo_version", f"version {to_version} is not the end of a command (or not known)")
    if after[0].origin is None or after[0].origin.seat != seat:
        raise RuleViolation("undo_not_allowed", f"the move after version {to_version} is not yours to take back")
    if all(step.origin is not None and step.origin.seat == seat for step in after):
        return [UndoApplied(to_version, seat)]
    if table.undo != WITH_CONSENT:
        raise RuleViolation(
            "undo_not_allowed",
            "other seats moved since: this table's policy (own_turn) takes back only your own moves since theirs",
        )
    return [UndoRequested(seat, to_version, tuple(s for s in range(table.seats) if s != seat))]


def _after(window: Window, to_version: int) -> tuple[Step, ...] | None:
    """The live steps after ``to_version``, if ``to_version`` ends a command of the window (the version of its
    anchor or one of its steps, the next step coming from another command, both origins known); else None."""
    steps = window.steps
    index = next((i for i, step in enumerate(steps) if step.version > to_version), None)
    if index is None:
        return None
    last = steps[index - 1] if index else window.anchor
    if last.version != to_version:
        return None
    first = steps[index]
    if last.origin is None or first.origin is None or last.origin == first.origin:
        return None
    return steps[index:]


def awaited_since(since: tuple[int, ...], before: Table, after: Table, seat: int | None) -> tuple[int, ...]:
    """Since which version each seat has been awaited for the decision it still owes, once ``seat``'s command
    (None: the platform's) took the game from ``before`` to ``after``: a seat awaited before and after, that did
    not send this command, keeps its version (the others' answers in a simultaneous step do not change its
    decision: Samarkand's choices, Istanbul's answers); any other seat's is ``after``'s version. A command's
    ``expected_version`` is stale only when it is older than its seat's (the engine's check)."""
    if after.status != PLAYING:
        return (after.version,) * after.seats
    was = set(flow(before).awaiting) if before.status == PLAYING else set()
    now = flow(after).awaiting
    old = since if len(since) == after.seats else (after.version,) * after.seats
    return tuple(old[s] if s in was and s in now and s != seat else after.version for s in range(after.seats))


def undo_targets(table: Table, seat: int) -> tuple[int, ...]:
    """The versions ``seat`` may send in ``RequestUndo`` now (granted at once, or asked with_consent), latest
    first."""
    window = table.window
    if table.status != PLAYING or table.undo == NO_UNDO or table.request is not None or window is None:
        return ()
    out = []
    own = True  # every step after the version under consideration is this seat's
    steps = window.steps
    for i in range(len(steps) - 1, -1, -1):
        step = steps[i]
        own = own and step.origin is not None and step.origin.seat == seat
        if not own and table.undo != WITH_CONSENT:
            break
        previous = steps[i - 1] if i else window.anchor
        if (step.origin is not None and step.origin.seat == seat and previous.origin is not None
                and previous.origin != step.origin):
            out.append(previous.version)
    return tuple(out)


def undo_view(table: Table, seat: int | None) -> UndoView:
    return UndoView(policy=table.undo, undone=table.undone, request=table.request,
                    to_versions=() if seat is None else undo_targets(table, seat))


def redact(table: Table, event: Any, seat: int | None) -> Any:
    """The event as ``seat`` may see it in the history: token hashes never, other secrets as the game says."""
    if isinstance(event, SeatJoined):
        return msgspec.structs.replace(event, token_hash="")
    if isinstance(event, GameCreated):  # the creator's and the invite's hashes are nobody's business
        if event.creator_hash or event.invite_hash:
            return msgspec.structs.replace(event, creator_hash="", invite_hash="")
        return event
    if isinstance(event, _PUBLIC_EVENTS):  # clocks, timeouts, leavers and bots' moves are everybody's to see
        return event
    return game_of(table).redact(event, seat)


# the table's events that hide nothing (one tuple: ``redact`` runs for every event and audience)
_PUBLIC_EVENTS = (GameForked, GameStarted, GameEnded, GameCancelled, SeatLeft, BotSeated, *UNDO_EVENTS, *CLOCK_EVENTS)


def seats_of(table: Table) -> tuple[SeatInfo, ...]:
    return tuple(SeatInfo(i, None if p is None else p.name, (p.bot or None) if p is not None else None)
                 for i, p in enumerate(table.players))


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
    clock = clock_view(table)
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
            legal=tuple(game.legal_commands(table.state, seat))
            if playing and seat in now.awaiting and not out_reason(table, seat) else (),
            view=game_views.get(seat),
            result=table.result,
            unfair=table.unfair,
            undo=undo_view(table, seat) if table.status in (PLAYING, OVER) else None,
            forked_from=table.forked_from,
            clock=clock,
        )
        for seat in audiences(table)
    }


# --- clocks, leaving and bots (issue #19) ----------------------------------------------------------------------
# docs/rules-decisions.md (Clocks). Time enters only as ``now`` (the engine's clock at a command, the recorded_at of
# its events) and the instants the events carry; nothing here reads a clock.

_CLOCK_EVENT_TYPES = tuple(CLOCK_EVENTS)


class Due(msgspec.Struct, frozen=True):
    """Something the clock worker must do at ``at`` (unix seconds): ``"timeout"`` (send ``Timeout(seat,
    deadline=at)``), ``"tick"`` (``Tick(key, due=at)``) or ``"bot"`` (a bot's ``PlayFor(seat, ...)``: at once)."""

    at: float
    kind: str  # "timeout" | "tick" | "bot"
    seat: int | None
    key: str = ""


def clock_options(raw: Any) -> ClockOptions | None:
    """``CreateGame.options["clock"]`` as the table keeps it (None: not given), else ``bad_clock``: an object of
    ``ClockOptions``' fields, times finite and not negative, a known policy."""
    if raw is None:
        return None
    try:
        options = msgspec.convert(raw, ClockOptions, strict=True)
    except msgspec.ValidationError as exc:
        raise RuleViolation("bad_clock", f"the option clock is an object of per_decision, reserve, increment "
                                         f"(seconds) and on_timeout: {exc}") from None
    for name in ("per_decision", "reserve", "increment"):
        value = getattr(options, name)
        if not 0.0 <= value < float("inf"):
            raise RuleViolation("bad_clock", f"the clock's {name} is a number of seconds, 0 or more, not {value}")
    if options.on_timeout not in CLOCK_TIMEOUT_POLICIES:
        raise RuleViolation("bad_clock", f"the clock's on_timeout is one of {', '.join(CLOCK_TIMEOUT_POLICIES)}, "
                                         f"not {options.on_timeout!r}")
    return options


def has_clock(table: Table) -> bool:
    """Whether the table's seats have clocks: a time per decision or a reserve."""
    clock = table.clock
    return clock is not None and (clock.per_decision > 0 or clock.reserve > 0)


def _paced(table: Table) -> bool:
    """Whether the table keeps ClocksSet: seats with clocks, or a game with a timer of its own."""
    return has_clock(table) or hasattr(game_of(table), "timer")


def out_reason(table: Table, seat: int) -> str:
    """Why ``seat`` is out of the game for good ("resigned" / "forfeited"), "" when it is in."""
    return table.out[seat] if 0 <= seat < len(table.out) else ""


def _out_map(table: Table) -> dict[str, str]:
    """The seats out of the game and why, keyed by the seat as text (a JSON object: the event reads back equal)."""
    return {str(s): reason for s, reason in enumerate(table.out) if reason}


def seat_clock(table: Table, seat: int) -> SeatClock | None:
    return table.clocks[seat] if 0 <= seat < len(table.clocks) else None


def stood_in(table: Table, seat: int) -> bool:
    """Whether ``seat`` timed out (policy "bot") on the decision it still owes: a bot may play that one for it."""
    deadline = table.timed_out[seat] if 0 <= seat < len(table.timed_out) else None
    clock = seat_clock(table, seat)
    return deadline is not None and clock is not None and clock.deadline == deadline


def bot_of(table: Table, seat: int) -> str:
    """The strategy of the server's bot that took ``seat`` at the start (``BotSeated``); "" for a player's seat."""
    player = table.players[seat] if 0 <= seat < len(table.players) else None
    return player.bot if player is not None else ""


def bot_plays(table: Table, seat: int) -> bool:
    """Whether a bot plays ``seat``'s decisions now: a bot's seat, out of the game, absent, or timed out on this
    decision."""
    return bool(bot_of(table, seat)) or bool(out_reason(table, seat)) or seat in table.absent or stood_in(table, seat)


def _marks_since(marks: tuple[ClockMark, ...], version: int) -> tuple[ClockMark, ...]:
    """The marks an undo back to ``version`` (the undo window's anchor) or later may need: the last one set at
    or before it (the clocks in force there), and every one after."""
    keep = next((i for i in range(len(marks) - 1, -1, -1) if marks[i].version <= version), 0)
    return marks[keep:]


def _per_seat(values: tuple[Any, ...], seats: int, seat: int, value: Any, empty: Any) -> tuple[Any, ...]:
    out = list(values) + [empty] * (seats - len(values))
    out[seat] = value
    return tuple(out)


def _barrier(table: Table, version: int, origin: Origin | None, **changes: Any) -> Table:
    """``table`` at ``version`` with ``changes``, and no undo back over this event (a timeout, a seat out): the
    undo window starts again here, a pending request ends."""
    window = None if table.window is None else Window(table.state, Step(version, origin))
    return msgspec.structs.replace(table, version=version, window=window, request=None, **changes)


def _evolve_clock(table: Table, event: Any, version: int, origin: Origin | None) -> Table:
    if isinstance(event, ClocksSet):
        # A running clock's deadline is the instant its decision began + per_decision + the reserve then: the
        # instant is that difference (exact for the instants the engine writes; the same fold gives the same).
        per = table.clock.per_decision if has_clock(table) and table.clock is not None else 0.0
        since = tuple(0.0 if c.deadline is None else c.deadline - per - c.reserve for c in event.clocks)
        timed_out = tuple(d if d is not None and s < len(event.clocks) and event.clocks[s].deadline == d else None
                          for s, d in enumerate(table.timed_out))
        marks = table.clock_marks
        if table.window is not None:  # what an undo inside the window puts back
            marks = (*_marks_since(marks, table.window.anchor.version), ClockMark(version, event.clocks, event.timer))
        return msgspec.structs.replace(
            table, version=version, clocks=event.clocks, clock_since=since, clock_at=event.at,
            timer=event.timer, timed_out=timed_out if any(d is not None for d in timed_out) else (),
            clock_marks=marks)
    if isinstance(event, SeatTimedOut):
        timed_out = _per_seat(table.timed_out, table.seats, event.seat, event.deadline, None)
        return _barrier(table, version, origin, timed_out=timed_out)
    if isinstance(event, SeatAbsent):
        absent = tuple(sorted({*table.absent, event.seat}))
        return msgspec.structs.replace(table, version=version, absent=absent)
    if isinstance(event, SeatReturned):
        absent = tuple(s for s in table.absent if s != event.seat)
        return msgspec.structs.replace(table, version=version, absent=absent)
    if isinstance(event, SeatOut):
        out = _per_seat(table.out, table.seats, event.seat, event.reason, "")
        absent = tuple(s for s in table.absent if s != event.seat)
        return _barrier(table, version, origin, out=out, absent=absent)
    return msgspec.structs.replace(table, version=version)  # BotMoved: the game's events that follow are its move


def _platform(table: Table, seat: int | None, token_hash: str | None, command: Any, chance: Chance,
              now: float) -> list[Any]:
    """The clock worker's commands: for no seat, with no token (the gateway never takes them from a client)."""
    if seat is not None or token_hash is not None:
        raise RuleViolation("not_allowed", "timeouts, timer ticks and bots' moves are the platform's commands")
    _check_playing(table)
    if isinstance(command, Timeout):
        return _timeout(table, command, chance, now)
    if isinstance(command, Tick):
        return _tick(table, command, chance, now)
    return _play_for(table, command, chance, now)


def _not_due(message: str) -> RuleViolation:
    return RuleViolation("not_due", message)


def _timeout(table: Table, command: Timeout, chance: Chance, now: float) -> list[Any]:
    seat = command.seat
    if not 0 <= seat < table.seats:
        raise RuleViolation("no_such_seat", f"seats are numbered 0 to {table.seats - 1}")
    clock = seat_clock(table, seat)
    if clock is None or clock.deadline != command.deadline or stood_in(table, seat):
        raise _not_due(f"{command.deadline} is not seat {seat}'s deadline (it moved, or it timed out already)")
    if now < command.deadline:
        raise _not_due(f"seat {seat}'s deadline {command.deadline} is not reached ({now})")
    assert table.clock is not None
    events: list[Any] = [SeatTimedOut(seat, command.deadline)]
    if table.clock.on_timeout == ABSENT:
        events.append(SeatAbsent(seat))
    elif table.clock.on_timeout == FORFEIT:
        events.append(SeatOut(seat, FORFEITED))
        events.extend(_one_left(fold(events, table), chance, "forfeit"))
    return _with_clocks(table, events, None, now)


def _tick(table: Table, command: Tick, chance: Chance, now: float) -> list[Any]:
    timer = table.timer
    if timer is None or (timer.key, timer.due) != (command.key, command.due):
        raise _not_due(f"the game's timer is not {command.key!r} due at {command.due}")
    if now < timer.due:
        raise _not_due(f"the timer {timer.key!r} is due at {timer.due}, not yet ({now})")
    game = game_of(table)
    events = _played(table, list(game.tick(table.state, timer.key, chance.mixed(table.mix))), chance)
    return _with_clocks(table, events, None, now, ticked=True)


def _play_for(table: Table, command: PlayFor, chance: Chance, now: float) -> list[Any]:
    seat = command.seat
    if not 0 <= seat < table.seats:
        raise RuleViolation("no_such_seat", f"seats are numbered 0 to {table.seats - 1}")
    game = game_of(table)
    if seat not in game.flow(table.state).awaiting or not bot_plays(table, seat):
        raise RuleViolation("not_stood_in", f"no bot plays seat {seat} now (it is not awaited, or it plays itself)")
    try:
        move = msgspec.convert(command.command, _command_union(table.game))
    except msgspec.ValidationError as exc:
        raise RuleViolation("bad_command", f"not a command of {game.title}: {exc}") from None
    events = [BotMoved(seat, command.strategy),
              *_played(table, list(game.decide(table.state, seat, move, chance.mixed(table.mix))), chance)]
    return _with_clocks(table, events, seat, now)


@cache
def _command_union(name: str) -> Any:
    game = get_game(name)
    assert game is not None
    return Union[tuple(game.command_types)]  # type: ignore[valid-type]  # noqa: UP007


def _resign(table: Table, seat: int | None, token_hash: str | None, chance: Chance) -> list[Any]:
    """A seat leaves a game in play for good: bots play for it; the game ends when one seat is left in it."""
    _check_playing(table)
    _check_token(table, seat, token_hash)
    assert seat is not None
    if out_reason(table, seat):
        raise RuleViolation("seat_out", f"seat {seat} is already out of the game ({out_reason(table, seat)})")
    events: list[Any] = [SeatOut(seat, RESIGNED)]
    return events + _one_left(fold(events, table), chance, "resignation")


def _one_left(table: Table, chance: Chance, ended_by: str) -> list[Any]:
    """GameEnded when only one seat is left in the game (``table``: once the last SeatOut is folded): it wins;
    the scores are the game's current ones when it has a ``scores(state)`` hook, else zeros."""
    left = [s for s in range(table.seats) if not out_reason(table, s)]
    if len(left) != 1:
        return []
    hook = getattr(game_of(table), "scores", None)
    scores = tuple(hook(table.state)) if hook is not None else (0,) * table.seats
    return [GameEnded(scores=scores, winners=(left[0],), seed=chance.seed.hex(),
                      details={"ended_by": ended_by, "out": _out_map(table)})]


def _with_clocks(table: Table, events: list[Any], mover: int | None, now: float, ticked: bool = False
                 ) -> list[Any]:
    """``events`` (a command's, on ``table``), then ``ClocksSet`` when the command changed the seats' clocks or
    the game's timer, in a game still in play whose table keeps them. ``mover``: the seat whose decision the
    command took (its own move, or a bot's for it); ``ticked``: the command was the timer's Tick."""
    if not events or table.status not in (OPEN, PLAYING) or not _paced(table):
        return events
    after = fold(events, table)
    if after.status != PLAYING:
        return events
    current = (after.clocks, after.timer)
    undo = next((e for e in events if isinstance(e, UndoApplied)), None)
    mark = None if undo is None else _mark_at(table, undo.to_version)
    if mark is not None:  # the clocks as they were when the game was where the undo takes it: time ran on
        after = msgspec.structs.replace(after, clocks=mark.clocks, timer=mark.timer)
    clocks, timer = _next_clocks(after, mover, now, ticked)
    if (clocks, timer) == current:
        return events
    if not has_clock(after) and timer == current[1]:  # no seat clocks, the game's timer as it was: nothing to
        return events  # tell (a stepwise Samarkand game, whose game has the hooks, stores what it did before)
    return [*events, ClocksSet(at=now, clocks=clocks, timer=timer)]


def _mark_at(table: Table, to_version: int) -> ClockMark | None:
    """The clocks in force when the game was at ``to_version`` (a version that ends a command): the last mark
    before the first game event after it (a command's ClocksSet follows its game events). None: not known."""
    window = table.window
    first = next((step.version for step in window.steps if step.version > to_version), None) if window else None
    if first is None:
        return None
    return next((mark for mark in reversed(table.clock_marks) if mark.version < first), None)


def _next_clocks(table: Table, mover: int | None, now: float, ticked: bool
                 ) -> tuple[tuple[SeatClock, ...], GameTimer | None]:
    """The seats' clocks and the game's timer once a command took the game to ``table`` (its clocks still the
    ones before it) at ``now``. A seat whose running clock stops (it moved, or it is no longer awaited, or the
    game's timer paces the game now) is charged the time past ``per_decision``; one that moved gets the
    increment; one awaited again, or newly, starts a clock: ``now + per_decision + reserve``; one awaited before
    and after that did not move keeps its deadline (a simultaneous decision: the others' answers do not change
    it)."""
    game = game_of(table)
    timer = None
    hook = getattr(game, "timer", None)
    if hook is not None:
        running = hook(table.state)
        if running is not None:
            key, seconds = running
            old = table.timer
            keep = old is not None and old.key == key and not ticked
            timer = old if keep else GameTimer(key, now + float(seconds))
    options = table.clock if has_clock(table) else None
    per = options.per_decision if options is not None else 0.0
    increment = options.increment if options is not None else 0.0
    start = options.reserve if options is not None else 0.0
    awaiting = set(game.flow(table.state).awaiting) if options is not None and timer is None else set()
    clocks = []
    for seat in range(table.seats):
        old = seat_clock(table, seat) or SeatClock(None, start)
        reserve = old.reserve
        running = old.deadline is not None
        moved = seat == mover
        awaited = seat in awaiting and not bot_plays_for_good(table, seat)
        if running and (moved or not awaited):
            assert old.deadline is not None
            since = old.deadline - per - old.reserve  # the instant its decision began
            reserve = max(0.0, reserve - max(0.0, now - since - per)) + (increment if moved else 0.0)
        if not awaited:
            clocks.append(SeatClock(None, reserve))
        elif running and not moved:
            clocks.append(old)
        else:
            clocks.append(SeatClock(now + per + reserve, reserve))
    return tuple(clocks), timer


def bot_plays_for_good(table: Table, seat: int) -> bool:
    """A bot's seat, out of the game or absent: the seat has no clock, a bot plays each of its decisions at once."""
    return bool(bot_of(table, seat)) or bool(out_reason(table, seat)) or seat in table.absent


def due(table: Table) -> tuple[Due, ...]:
    """What the clock worker must do for this table, earliest first: each awaited seat's timeout at its
    deadline, the game's timer at its due, and a bot's move at once (at the clocks' instant) for each awaited
    seat a bot plays now."""
    if table.status != PLAYING:
        return ()
    out = []
    for seat in game_of(table).flow(table.state).awaiting:
        clock = seat_clock(table, seat)
        if bot_plays(table, seat):
            out.append(Due(table.clock_at, "bot", seat))
        elif clock is not None and clock.deadline is not None:
            out.append(Due(clock.deadline, "timeout", seat))
    if table.timer is not None:
        out.append(Due(table.timer.due, "tick", None, table.timer.key))
    return tuple(sorted(out, key=lambda d: (d.at, d.kind, -1 if d.seat is None else d.seat)))


def next_due(table: Table) -> float | None:
    """The earliest instant something is due at this table (None: nothing: the deadline index drops it)."""
    pending = due(table)
    return pending[0].at if pending else None


def clock_view(table: Table) -> ClockView | None:
    """What every reader sees of the clocks (they are public): None when the table has no clock options, no
    timer, and nobody is absent, out or played by a bot."""
    seats = range(table.seats)
    if table.clock is None and table.timer is None and not any(bot_plays(table, s) for s in seats):
        return None
    live = table.status == PLAYING
    start = table.clock.reserve if has_clock(table) and table.clock is not None else 0.0
    views = []
    for seat in seats:
        clock = seat_clock(table, seat) or SeatClock(None, start)
        views.append(SeatClockView(seat=seat, deadline=clock.deadline if live else None, reserve=clock.reserve,
                                   absent=seat in table.absent, out=out_reason(table, seat),
                                   bot=live and bot_plays(table, seat)))
    return ClockView(options=table.clock, seats=tuple(views), timer=table.timer if live else None,
                     at=table.clock_at)
