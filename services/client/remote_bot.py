"""A bot that plays a seat remotely, through the Python SDK (``souk bot``; README, Bots).

It holds what a player holds: its seat's token, its views, the public history. When its seat is awaited it builds
a state from the seat's view alone (the game's ``from_view`` hook: what the view hides drawn at random), lets a
strategy of ``services.bots`` choose in it, and sends the command with the view's version as ``expected_version``
and a command id made of the game, the seat and that version: a resend, or a bot restarted at the same view, sends
the same id and is answered, never applied twice; a choice for a view the game has moved past is refused as
``stale`` and the bot waits for the newer view. It follows the game on the seat's WebSocket (``Seat.follow``),
or polls the seat's view (``poll=True``), until the game is over.

Nothing here reads the server's state: a bot here knows exactly what its seat's player could know.

It lives beside the SDK rather than in ``services.bots``: the server's takeover of a seat (the clock worker,
``services.runtime``) imports the strategies, and this package imports the gateway (the TypeScript generator), so
a ``services.bots`` that imported the client would close a circle between the layers
(tests/services/test_import_graph.py).
"""

from __future__ import annotations

import asyncio
import copy
import random
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec
import structlog

from contracts.readmodels import TableView
from contracts.table import GameCreated
from domain.kernel import get_game
from services.bots.strategies import Strategy, StrategyError
from services.client.sdk import FINAL, Seat, SoukClient, SoukError, pumped

log = structlog.get_logger("souk.bot")

# refusals that only say the game moved on before the command arrived: the newer view says what to do. Any other
# (a rule refusal at the very version the command was chosen for: its legal commands came from the server) ends
# the bot loudly rather than leaving it waiting for a view that would not come.
MOVED_ON = ("stale", "game_over", "game_cancelled")


def command_id(game_id: str, seat: int, version: int) -> str:
    """The id of the seat's command at ``version``: the same for every resend and every bot at that view."""
    return f"bot-{seat}-{version}-{game_id}"[:100]


async def options_of(seat: Seat) -> Any:
    """The game's options, from the game's first event (``GameCreated``, public in every seat's history)."""
    page = await seat.history(after=0, limit=1)
    created = page.entries[0].event if page.entries else None
    if not isinstance(created, GameCreated):
        raise StrategyError("no_options", f"game {seat.game_id}'s history does not start with its creation")
    game = get_game(created.game)
    return msgspec.convert(created.options, game.options_type)


def _clock(view: TableView) -> Any | None:
    """The seat's own clock in the view (``TableView.clock``), None without one."""
    if view.clock is None:
        return None
    return next((c for c in view.clock.seats if c.seat == view.seat), None)


def paced(strategy: Strategy, view: TableView, now: float) -> Strategy:
    """``strategy``, its time budget (mcts's ``budget``) cut to half the time the seat has left before its
    deadline (``TableView.clock``; at least 50 ms) so that a bot answers before its clock runs out; itself when it
    has no budget or the seat no deadline."""
    budget = getattr(strategy, "budget", None)
    mine = _clock(view)
    if budget is None or mine is None or mine.deadline is None:
        return strategy
    cut = max(0.05, (mine.deadline - now) / 2)
    if cut >= budget:
        return strategy
    faster = copy.copy(strategy)
    faster.budget = cut  # type: ignore[attr-defined]
    return faster


def choose(view: TableView, strategy: Strategy, options: Any, rng: random.Random,
           now: float | None = None) -> Any | None:
    """The strategy's command for the seat that ``view`` belongs to, in a state built from the view alone (None:
    the seat is not awaited, has nothing to choose, or is out of the game: the server's bots play it for good).
    ``now`` (unix seconds, default the clock's): a seat with a deadline thinks within it (``paced``)."""
    if view.status != "playing" or view.seat is None or view.seat not in view.flow.awaiting or not view.legal:
        return None
    mine = _clock(view)
    if mine is not None and mine.out:
        return None
    strategy = paced(strategy, view, time.time() if now is None else now)
    game = get_game(view.game)
    if len(view.legal) == 1:
        return view.legal[0]
    from_view = getattr(game, "from_view", None)
    if from_view is None:
        if strategy.name != "random":
            raise StrategyError("no_hook", f"{game.title} has no 'from_view' hook: only random plays it remotely")
        return rng.choice(view.legal)
    state = from_view(view.view, view.seat, len(view.seats), options, rng)
    command = strategy.choose(game, state, view.seat, rng)
    if command not in view.legal:  # never: the state shows the seat the same legal commands (tests/bots)
        raise StrategyError("illegal_choice", f"{strategy.name} chose {command!r}, not one of the seat's commands")
    return command


def _decided(view: TableView, strategy: Strategy, options: Any, rng: random.Random) -> Any | None:
    """``choose``, and when a defect of a ``from_view`` hook or of a strategy shows (an exception, a command the
    seat may not send), a legal command at random: the seat still plays, and the log says so (``bot_fallback``). A
    strategy that cannot play the game at all (``no_hook``) is the operator's to change: raised."""
    try:
        return choose(view, strategy, options, rng)
    except StrategyError as exc:
        if exc.code != "illegal_choice":
            raise
        error = str(exc)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    log.warning("bot_fallback", game_id=view.game_id, seat=view.seat, version=view.version, strategy=strategy.name,
                error=error)
    return rng.choice(view.legal)


async def _polled(seat: Seat, interval: float) -> AsyncIterator[TableView]:
    """The seat's views by polling: each newer version (the server waits up to 3 s for one), until the last."""
    version = -1
    while True:
        view = await seat.view(min_version=version + 1)
        if view.version > version:
            version = view.version
            yield view
            if view.status in FINAL:
                return
        else:
            await asyncio.sleep(interval)


async def _watched(seat: Seat, idle: float) -> AsyncIterator[TableView]:
    """The seat's views as its WebSocket pushes them, and, when none came for ``idle`` seconds, the seat's view as
    it is (``Seat.view``) if it is newer: a push lost on the way while the socket stayed open would otherwise leave
    the bot waiting for ever for a view that awaits it. Each version once, in order, up to the last."""
    pushed = pumped(seat.follow(), idle)
    version = -1
    try:
        async for item in pushed:
            if item is None:  # nothing pushed for ``idle`` seconds
                item = await seat.view()
            if not isinstance(item, TableView) or item.version <= version:
                continue
            version = item.version
            yield item
            if item.status in FINAL:
                return
    finally:
        await pushed.aclose()


async def play(seat: Seat, strategy: Strategy, *, rng: random.Random | None = None, poll: bool = False,
               interval: float = 0.2, idle: float = 5.0, on_move: Callable[[TableView, Any], None] | None = None,
               options: Any = None) -> TableView:
    """Plays ``seat`` with ``strategy`` until the game is over (or cancelled); returns the last view. ``on_move``
    is told each command sent, with the view it was chosen in. ``options``: the game's (read from its history
    unless given). Following the WebSocket, the seat's view is read after ``idle`` seconds without a push
    (``_watched``); polling, every ``interval`` seconds while no newer view came."""
    rng = rng or random.Random()
    if options is None:
        options = await options_of(seat)
    views = _polled(seat, interval) if poll else _watched(seat, idle)
    last: TableView | None = None
    async for view in views:
        if not isinstance(view, TableView):
            continue
        last = view
        command = _decided(view, strategy, options, rng)
        if command is None:
            continue
        try:
            await seat.send(command, expected_version=view.version,
                            command_id=command_id(view.game_id, seat.seat, view.version))
        except SoukError as exc:
            if exc.code not in MOVED_ON:
                raise
            continue  # the game moved on meanwhile: the next view is on its way
        if on_move is not None:
            on_move(view, command)
    if last is None:
        raise SoukError(0, "no_view", f"no view of game {seat.game_id} came")
    return last


async def free_seats(client: SoukClient, game_id: str) -> list[int]:
    entry = await client.game(game_id)
    return [s.seat for s in entry.seats if s.name is None]


async def fill(client: SoukClient, game_id: str, strategy: Callable[[], Strategy], *, rng: random.Random | None = None,
               poll: bool = False, name: str = "bot", on_move: Callable[[TableView, Any], None] | None = None,
               seeded: bool = False) -> list[TableView]:
    """Joins every free seat of ``game_id`` (as "bot 1", "bot 2"...) and plays them all until the game ends;
    returns each seat's last view. Each seat has its own strategy object and its own random draws (from ``rng``),
    and reads only its own view. ``seeded`` (``souk bot --fill --seed``): each seat's entropy, its share of the
    game's chance, is drawn from ``rng`` too, so that a game created with a seed (``unfair``) is the same game at
    every run (a test's); else it is the SDK's (``secrets``), as a player's."""
    rng = rng or random.Random()
    seats, draws = [], []
    for n, number in enumerate(await free_seats(client, game_id), start=1):
        own = random.Random(rng.randbytes(16))
        entropy = own.randbytes(32).hex() if seeded else None
        seats.append(await client.join(game_id, f"{name} {n}", seat=number, entropy=entropy))
        draws.append(own)
    if not seats:
        raise SoukError(409, "no_free_seat", f"game {game_id} has no free seat")
    return list(await asyncio.gather(*(play(s, strategy(), rng=own, poll=poll, on_move=on_move)
                                       for s, own in zip(seats, draws))))


async def seat_of(client: SoukClient, game_id: str, number: int, token: str) -> Seat:
    """The handle of a seat taken before (``souk bot --seat N --token T``): its game's name is read from the lobby
    entry, the token is checked by the first request that needs it."""
    from contracts.api import Joined

    entry = await client.game(game_id)
    return Seat(client, entry.game, Joined(game_id=game_id, seat=number, token=token, version=0))
