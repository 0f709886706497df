"""The remote bot's loop (services/client/remote_bot.py) over an in-memory stand-in for the SDK's ``Seat``: it plays
every title to its end from its seat's views alone, sends each command with the view's version and an id made of it, is
refused as stale and chooses again at the newer view, and its decisions do not change when facts its seat never saw
are swapped."""

from __future__ import annotations

import asyncio
import random
import re

import msgspec
import pytest

from contracts.readmodels import SeatInfo, TableView
from domain.chance import Chance
from services.bots import strategy
from services.client.remote_bot import choose, command_id, play
from services.client.sdk import SoukError
from tests.bots.knowledge import SWAPS, positions
from tests.bots.support import started


class Server:
    """One game in memory, as the gateway serves it: each seat's ``TableView``, commands decided at the expected
    version (``stale`` otherwise), a command id answered once."""

    def __init__(self, name: str, seats: int, seed: int, stale_once: bool = False) -> None:
        self.game, self.state = started(name, seats, seed)
        self.name, self.seats, self.seed = name, seats, seed
        self.version = 1
        self.ids: dict[str, int] = {}
        self.sent: list[tuple[int, int, str]] = []  # (seat, expected version, command id) of each accepted command
        self.refused = 0
        self.stale_once = stale_once
        self.changed = asyncio.Condition()

    def view(self, seat: int) -> TableView:
        game, state = self.game, self.state
        over = game.result(state) is not None
        view = game.view(state, seat)
        return TableView(game_id="g1", game=self.name, title="in memory", version=self.version,
                         status="over" if over else "playing", seat=seat,
                         seats=tuple(SeatInfo(seat=i, name=f"bot {i + 1}") for i in range(self.seats)),
                         flow=game.flow(state), legal=() if over else tuple(game.legal_commands(state, seat)),
                         view=msgspec.convert(msgspec.to_builtins(view), type(view)),  # as the SDK decodes it
                         result=game.result(state))

    async def send(self, seat: int, command, expected_version: int, command_id: str) -> None:
        if command_id in self.ids:
            return
        if self.stale_once:  # an event that changes nothing for the seats came first (a clock's, say)
            self.stale_once = False
            async with self.changed:
                self.version += 1
                self.changed.notify_all()
        if expected_version != self.version:
            self.refused += 1
            raise SoukError(409, "stale", "the game moved on")
        for event in self.game.decide(self.state, seat, command, Chance(self.seed.to_bytes(8, "big"), self.version)):
            self.state = self.game.evolve(self.state, event)
        self.ids[command_id] = self.version
        self.sent.append((seat, expected_version, command_id))
        async with self.changed:
            self.version += 1
            self.changed.notify_all()


class FakeSeat:
    """What ``play`` uses of ``services.client.sdk.Seat``: ``seat``, ``game_id``, ``follow()`` and ``send()``."""

    def __init__(self, server: Server, seat: int, missed: int = 0) -> None:
        self.server, self.seat, self.game_id = server, seat, "g1"
        self.missed = missed  # every missed-th push never comes (0: none is missed)

    async def follow(self):
        last = -1
        while True:
            async with self.server.changed:
                await self.server.changed.wait_for(lambda: self.server.version > last)
            view = self.server.view(self.seat)
            last = view.version
            if self.missed and view.version % self.missed == 0 and view.status != "over":
                continue  # a push lost on the way (the socket stays open)
            yield view
            if view.status == "over":
                return

    async def view(self, min_version: int = 0):
        return self.server.view(self.seat)

    async def send(self, command, *, expected_version, command_id):
        await self.server.send(self.seat, command, expected_version, command_id)


GAMES = [("karawane", 2, "seeker", {}), ("yspahan", 2, "greedy", {"samples": 1}), ("samarkand", 3, "random", {}),
         ("istanbul", 2, "greedy", {"samples": 1}), ("istanbul", 1, "greedy", {"samples": 1}),
         ("karawane", 4, "seeker", {}), ("samarkand", 5, "greedy", {"samples": 1}), ("yspahan", 4, "random", {}),
         ("yspahan", 2, "mcts", {"budget": None, "iterations": 6, "rollout": 6}),
         ("samarkand", 3, "mcts", {"budget": None, "iterations": 4, "rollout": 4})]


async def _played(server: Server, kind: str, settings: dict) -> list[TableView]:
    options = server.game.options_type()
    return await asyncio.wait_for(asyncio.gather(*(
        play(FakeSeat(server, s), strategy(kind, **settings), rng=random.Random(s), options=options)
        for s in range(server.seats))), 300)


@pytest.mark.parametrize("name,seats,kind,settings", GAMES)
def test_remote_bots_play_a_game_of_each_title_to_its_end_from_their_views(name, seats, kind, settings):
    from structlog.testing import capture_logs

    server = Server(name, seats, seed=9)
    with capture_logs() as logs:
        last = asyncio.run(_played(server, kind, settings))
    assert not [e for e in logs if e["event"] == "bot_fallback"], logs  # every choice was the strategy's own
    assert server.game.result(server.state) is not None
    assert all(v.status == "over" and v.version == server.version for v in last)
    ids = [i for _, _, i in server.sent]
    assert len(set(ids)) == len(ids) and all(i == command_id("g1", s, v) for s, v, i in server.sent)


def test_a_push_that_never_comes_does_not_stall_the_bot_it_reads_its_seats_view_after_a_while():
    """The socket stays open but a view is never pushed (every 7th version here): without the watch, the bot whose
    seat that view awaits would wait for ever."""
    server = Server("karawane", 2, seed=3)
    options = server.game.options_type()

    async def played():
        return await asyncio.wait_for(asyncio.gather(*(
            play(FakeSeat(server, s, missed=7), strategy("seeker"), rng=random.Random(s), options=options, idle=0.02)
            for s in range(2))), 60)

    asyncio.run(played())
    assert server.game.result(server.state) is not None


def test_a_command_refused_as_stale_is_chosen_again_at_the_newer_view():
    server = Server("yspahan", 2, seed=4, stale_once=True)
    asyncio.run(_played(server, "random", {}))
    assert server.refused >= 1 and server.game.result(server.state) is not None


def test_the_command_id_is_the_same_for_the_same_seat_and_version_and_differs_otherwise():
    assert command_id("g1", 0, 7) == command_id("g1", 0, 7)
    assert len({command_id("g1", 0, 7), command_id("g1", 1, 7), command_id("g1", 0, 8), command_id("g2", 0, 7)}) == 4
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,100}", command_id("a" * 200, 3, 10**9))


STRATEGIES = {"random": {}, "greedy": {"samples": 2}, "mcts": {"budget": None, "iterations": 20, "rollout": 10},
              "seeker": {}}


def _table_view(game, state, seat) -> TableView:
    view = game.view(state, seat)
    return TableView(game_id="g1", game=game.name, title="t", version=3, status="playing", seat=seat,
                     seats=tuple(SeatInfo(seat=i, name="x") for i in range(state.seats)), flow=game.flow(state),
                     legal=tuple(game.legal_commands(state, seat)), view=view)


@pytest.mark.parametrize("name", sorted(SWAPS))
@pytest.mark.parametrize("kind", sorted(STRATEGIES))
def test_a_remote_bots_decision_does_not_change_when_facts_its_seat_never_saw_are_swapped(name, kind):
    bot = strategy(kind, **STRATEGIES[kind])
    for game, state, seat, swapped in positions(name, count=4):
        for k in range(1 if kind.startswith("mcts") else 2):  # one seed of its chance for a search (CI's time)
            one = choose(_table_view(game, state, seat), bot, state.options, random.Random(k))
            other = choose(_table_view(game, swapped, seat), bot, state.options, random.Random(k))
            assert one == other and one in game.legal_commands(state, seat)


def test_a_seat_not_awaited_chooses_nothing():
    game, state = started("yspahan", 2, seed=1)
    idle = next(s for s in range(2) if s not in game.flow(state).awaiting)
    assert choose(_table_view(game, state, idle), strategy("random"), state.options, random.Random(0)) is None


def test_a_defect_of_the_from_view_hook_does_not_stall_the_seat_it_plays_at_random_and_says_so(monkeypatch):
    from structlog.testing import capture_logs

    server = Server("yspahan", 2, seed=6)

    def broken(self, view, seat, seats, options, rng):
        raise ValueError("a defect")

    monkeypatch.setattr(type(server.game), "from_view", broken)
    with capture_logs() as logs:
        asyncio.run(_played(server, "greedy", {"samples": 1}))
    assert server.game.result(server.state) is not None
    assert logs and all(e["event"] == "bot_fallback" and "a defect" in e["error"] for e in logs)


@pytest.mark.parametrize("args,code", [
    (["g1", "--fill", "--strategy", "minimax"], "unknown_strategy"),
    (["g1", "--fill", "--seat", "1", "--token", "t"], "bad_arguments"),
    (["g1", "--seat", "1"], "bad_arguments"),
    (["g1"], "bad_arguments"),
])
def test_souk_bot_refuses_bad_arguments_with_their_code_and_plays_nothing(args, code):
    from click.testing import CliRunner

    from services.cli.main import cli

    done = CliRunner().invoke(cli, ["bot", *args])
    assert done.exit_code == 2 and code in done.output, done.output


def test_souk_bot_says_when_no_server_answers():
    from click.testing import CliRunner

    from services.cli.main import cli

    done = CliRunner().invoke(cli, ["bot", "g1", "--fill", "--server", "http://127.0.0.1:9"])
    assert done.exit_code == 1 and "unreachable" in done.output, done.output


def test_the_remote_bot_reaches_the_server_through_the_sdk_only():
    """services/client/remote_bot.py imports, of Souk's services, the SDK and the strategies only: no store, engine,
    projector, gateway or history code that could read more than the seat's answers."""
    import ast
    from pathlib import Path

    import services.client.remote_bot as remote

    tree = ast.parse(Path(remote.__file__).read_text(encoding="utf-8"))
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    modules |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    services = {m for m in modules if m.startswith("services.")}
    assert services and services <= {"services.client.sdk", "services.bots.strategies"}, services


def _clocked(game, state, seat, deadline=None, out=""):
    from contracts.table import ClockView, SeatClockView

    view = _table_view(game, state, seat)
    clock = ClockView(seats=tuple(SeatClockView(seat=i, deadline=deadline if i == seat else None,
                                                out=out if i == seat else "") for i in range(state.seats)), at=100.0)
    return msgspec.structs.replace(view, clock=clock)


class _Timed:
    """A strategy with a time budget that records the budget each choice had."""

    name = "timed"

    def __init__(self, budget):
        self.budget, self.used = budget, []

    def choose(self, game, state, seat, rng):
        self.used.append(self.budget)
        return game.legal_commands(state, seat)[0]


def test_a_bot_with_a_deadline_thinks_within_half_the_time_it_has_left():
    game, state = started("yspahan", 2, seed=1)
    seat = game.flow(state).awaiting[0]
    bot = _Timed(5.0)
    choose(_clocked(game, state, seat, deadline=104.0), bot, state.options, random.Random(0), now=100.0)
    choose(_clocked(game, state, seat, deadline=130.0), bot, state.options, random.Random(0), now=100.0)
    choose(_clocked(game, state, seat, deadline=100.01), bot, state.options, random.Random(0), now=100.0)
    choose(_table_view(game, state, seat), bot, state.options, random.Random(0), now=100.0)
    assert bot.used == [2.0, 5.0, 0.05, 5.0] and bot.budget == 5.0  # the strategy itself is left as it was


def test_a_seat_out_of_the_game_is_not_played_by_the_remote_bot():
    game, state = started("yspahan", 2, seed=1)
    seat = game.flow(state).awaiting[0]
    view = _clocked(game, state, seat, out="resigned")
    assert choose(view, strategy("random"), state.options, random.Random(0)) is None
