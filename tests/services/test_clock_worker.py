"""The clock worker against a real Redis, with the engine in process: the deadline index the engine writes, the
commands the worker sends for what is due, and their fate (decided once, whoever sends them, however often)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time

import msgspec
import pytest

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from services.clock import ClockWorker, Takeover, command_id
from services.engine.service import Engine
from services.store import keys
from services.store.codec import command_envelope_decoder, encoder
from services.store.events import RedisEventStore
from tests.domain.clock_toy import toy_games  # noqa: F401 - a fixture
from tests.services.tally import Add

pytestmark = pytest.mark.anyio


def th(seat: int) -> str:
    return hashlib.sha256(f"t{seat}".encode()).hexdigest()


def cmd(game_id: str, body, seat=None, token=None, cid=None) -> CommandEnvelope:
    return CommandEnvelope(cid or f"c-{id(body)}-{seat}", game_id, msgspec.Raw(encoder.encode(body)), seat=seat,
                           token_hash=token)


@pytest.fixture
def store(redis):
    return RedisEventStore(redis)


@pytest.fixture
def engine(redis, store):
    return Engine(redis, store)


def worker(redis, store, **options) -> ClockWorker:
    return ClockWorker(redis, store, retry_s=options.pop("retry_s", 0.5), takeover=Takeover("greedy"), **options)


async def started(engine: Engine, game_id: str, clock: dict, seats: int = 2, game: str = "tally", **options) -> int:
    """A tally game (or ``game``) with these clock options, every seat taken; returns the seat whose turn it is."""
    options = {**options, **({"clock": clock} if clock else {})}
    replies = await engine.handle(
        [cmd(game_id, CreateGame(game, "t", seats, options, "00ff" * 16, unfair=True), cid="create")]
        + [cmd(game_id, JoinSeat(f"p{s}", th(s), s), seat=s, cid=f"join{s}") for s in range(seats)])
    assert [r.status for r in replies] == ["accepted"] * (seats + 1), replies
    table = (await engine.load(game_id)).table
    return table.state.turn if game == "tally" else 0


class Commands:
    """``souk:commands`` as the engine's consumer would read it: what the workers sent since the last read."""

    def __init__(self, redis) -> None:
        self.redis, self.after = redis, "0-0"

    async def read(self) -> list[tuple[bytes, CommandEnvelope]]:
        entries = await self.redis.xrange(keys.commands(0), min=f"({self.after}", max="+")
        if entries:
            self.after = entries[-1][0].decode()
        return [(entry, command_envelope_decoder.decode(fields[b"c"])) for entry, fields in entries]

    async def decide(self, engine: Engine) -> list:
        entries = await self.read()
        return await engine.handle([e for _, e in entries], [i for i, _ in entries]) if entries else []


async def types(store, game_id: str) -> list[str]:
    return [e.type for e in await store.read(game_id)]


async def wait_until(instant: float) -> None:
    await asyncio.sleep(max(0.0, instant - time.time()) + 0.01)


async def test_the_engine_writes_a_clocked_games_next_deadline_with_its_events_and_none_for_a_game_without(
        engine, store):
    await started(engine, "clocked", {"per_decision": 30})
    table = (await engine.load("clocked")).table
    [due] = tbl.due(table)
    assert due.kind == "timeout" and await store.deadline("clocked") == pytest.approx(due.at, abs=1e-6)
    assert due.at == pytest.approx(time.time() + 30, abs=2)
    await started(engine, "plain", {})
    assert await store.deadline("plain") is None


async def test_a_deadline_is_sent_as_a_timeout_and_the_table_times_the_seat_out_once(engine, store, redis):
    turn = await started(engine, "g", {"per_decision": 0.05, "on_timeout": "forfeit"})
    version = (await engine.load("g")).table.version
    await wait_until(await store.deadline("g"))
    commands = Commands(redis)
    assert await worker(redis, store).fire_due() == 1
    [(_, sent)] = await commands.read()
    assert sent.seat is None and sent.token_hash is None and sent.command_id == f"clock:{version}:timeout:{turn}"
    assert msgspec.json.decode(sent.body)["type"] == "table.Timeout"
    [reply] = await engine.handle([sent])
    assert reply.status == "accepted", reply
    events = await types(store, "g")
    assert events.count("table.SeatTimedOut") == 1 and "table.SeatOut" in events and events[-1] == "table.GameEnded"
    assert await store.deadline("g") is None  # over: out of the index


async def test_two_workers_that_find_the_same_deadline_send_the_same_command_and_it_is_decided_once(
        engine, store, redis):
    await started(engine, "g", {"per_decision": 0.05, "on_timeout": "forfeit"})
    await wait_until(await store.deadline("g"))
    first, second = worker(redis, store), worker(redis, store)
    now, score = time.time(), await store.deadline("g")
    # both read the index before either sent (the second's pass would not find it due after the first's)
    assert await first.fire("g", score, now) == 1 and await second.fire("g", score, now) == 1
    commands = Commands(redis)
    entries = await commands.read()
    assert len(entries) == 2 and entries[0][1].command_id == entries[1][1].command_id
    replies = await engine.handle([e for _, e in entries], [i for i, _ in entries])
    assert [r.status for r in replies] == ["accepted", "accepted"] and replies[0] == replies[1]  # the first answer
    assert (await types(store, "g")).count("table.SeatTimedOut") == 1


async def test_a_worker_leaves_a_game_it_sent_commands_for_until_the_engine_answers_or_the_retry_delay_passes(
        engine, store, redis):
    await started(engine, "g", {"per_decision": 0.05, "on_timeout": "forfeit"})
    await wait_until(await store.deadline("g"))
    clock = worker(redis, store, retry_s=30)
    now = time.time()
    assert await clock.fire_due(now) == 1
    assert await clock.fire_due(now + 1) == 0  # not sent again while the engine works
    assert await store.deadline("g") == pytest.approx(now + 30, abs=1e-6)


async def test_a_deadline_made_moot_by_a_move_is_not_fired(engine, store, redis):
    turn = await started(engine, "g", {"per_decision": 0.3})
    old = await store.deadline("g")
    await asyncio.sleep(0.1)  # the next deadline is 0.1 s after the old one
    [reply] = await engine.handle([cmd("g", Add(1), seat=turn, token=th(turn), cid="move")])
    assert reply.status == "accepted"
    assert await store.deadline("g") > old  # the other seat's deadline now
    clock = worker(redis, store)
    assert await clock.fire_due(old + 0.01) == 0 and clock.sent == 0
    assert await Commands(redis).read() == []


async def test_a_timeout_the_engine_finds_moot_is_refused_and_changes_nothing(engine, store, redis):
    """A worker that read the deadline just before the seat moved: its Timeout reaches the engine after the move."""
    turn = await started(engine, "g", {"per_decision": 0.05})
    await wait_until(await store.deadline("g"))
    clock = worker(redis, store)
    assert await clock.fire_due() == 1
    [reply] = await engine.handle([cmd("g", Add(1), seat=turn, token=th(turn), cid="move")])
    assert reply.status == "accepted"
    before = await types(store, "g")
    [(_, late)] = await Commands(redis).read()
    [answer] = await engine.handle([late])
    assert answer.status == "rejected" and answer.code == "not_due"
    assert await types(store, "g") == before


async def test_a_seat_timed_out_under_the_bot_policy_is_played_by_the_takeover_bot_once(engine, store, redis):
    turn = await started(engine, "g", {"per_decision": 0.05, "on_timeout": "bot"})
    await wait_until(await store.deadline("g"))
    commands, clock = Commands(redis), worker(redis, store)
    assert await clock.fire_due() == 1
    assert [r.status for r in await commands.decide(engine)] == ["accepted"]
    version = (await engine.load("g")).table.version
    # the bot's move is due at once: two workers send the same PlayFor, played once
    now, score = time.time(), await store.deadline("g")
    assert score <= now
    assert await clock.fire("g", score, now) == 1 and await worker(redis, store).fire("g", score, now) == 1
    entries = await commands.read()
    assert {e.command_id for _, e in entries} == {f"clock:{version}:bot:{turn}"}
    body = msgspec.json.decode(entries[0][1].body)
    # tally has no evaluation hook: the takeover strategy (greedy) falls back to random
    assert body["type"] == "table.PlayFor" and body["seat"] == turn and body["strategy"] == "random"
    assert body["command"]["type"] == "tally.Add"
    assert entries[0][1].expected_version == version
    await engine.handle([e for _, e in entries], [i for i, _ in entries])
    events = await store.read("g")
    assert [e.type for e in events].count("table.BotMoved") == 1
    moved = next(i for i, e in enumerate(events) if e.type == "table.BotMoved")
    assert events[moved + 1].type == "tally.Added"


async def test_a_bot_move_chosen_at_one_version_is_not_played_at_another(engine, store, redis):
    turn = await started(engine, "g", {"per_decision": 0.05, "on_timeout": "bot"})
    await wait_until(await store.deadline("g"))
    commands, clock = Commands(redis), worker(redis, store)
    await clock.fire_due()
    await commands.decide(engine)
    await clock.fire_due()  # PlayFor at this version...
    [reply] = await engine.handle([cmd("g", Add(1), seat=turn, token=th(turn), cid="own")])  # ...the seat played
    assert reply.status == "accepted"
    [answer] = await commands.decide(engine)
    assert answer.status == "rejected" and answer.code == "stale"
    assert "table.BotMoved" not in await types(store, "g")


async def test_a_worker_that_read_a_game_before_it_moved_sends_nothing(engine, store, redis, monkeypatch):
    turn = await started(engine, "g", {"per_decision": 0.05})
    await wait_until(await store.deadline("g"))
    clock = worker(redis, store)
    stale = await clock.loader.load("g")
    await engine.handle([cmd("g", Add(1), seat=turn, token=th(turn), cid="move")])

    async def load_stale(game_id: str):  # as if the game had been read just before the move
        return stale

    monkeypatch.setattr(clock.loader, "load", load_stale)
    assert await clock.fire("g", 0.0, time.time()) == 0
    assert await Commands(redis).read() == []


def test_the_command_ids_are_the_designs():
    assert command_id(7, tbl.Due(1.0, "timeout", 2)) == "clock:7:timeout:2"
    assert command_id(7, tbl.Due(1.0, "tick", None, "k")) == "clock:7:tick:"
    assert command_id(7, tbl.Due(1.0, "bot", 0)) == "clock:7:bot:0"


def test_the_takeover_strategy_and_the_clocks_timings_are_settings(monkeypatch):
    from services.runtime.config import Settings, SettingError

    monkeypatch.setenv("SOUK_TAKEOVER_STRATEGY", "MCTS")
    monkeypatch.setenv("SOUK_TAKEOVER_BUDGET", "0.2")
    monkeypatch.setenv("SOUK_CLOCK_POLL_S", "0.01")
    settings = Settings.from_env()
    assert (settings.takeover_strategy, settings.takeover_budget, settings.clock_poll_s) == ("mcts", 0.2, 0.01)
    monkeypatch.setenv("SOUK_TAKEOVER_STRATEGY", "clever")
    with pytest.raises(SettingError, match="SOUK_TAKEOVER_STRATEGY.*random, greedy, mcts, seeker"):
        Settings.from_env()
    monkeypatch.setenv("SOUK_TAKEOVER_STRATEGY", "random")
    monkeypatch.setenv("SOUK_CLOCK_RETRY_S", "0")
    with pytest.raises(SettingError, match="SOUK_CLOCK_RETRY_S"):
        Settings.from_env()


def test_the_takeover_bot_plays_mcts_with_its_budget_and_a_legal_command():
    """The takeover's choice for a real game (Yspahan's hooks): the strategy's, legal for the seat."""
    from domain.chance import Chance

    table = tbl.EMPTY
    for seat, command in [(None, CreateGame("yspahan", "t", 2, {}, "00ff" * 16, unfair=True))] + [
            (s, JoinSeat(f"p{s}", th(s), s)) for s in range(2)]:
        table = tbl.fold(tbl.decide(table, seat, th(seat) if seat is not None else None, command,
                                    Chance(b"s" * 32, table.version)), table)
    [seat] = tbl.game_of(table).flow(table.state).awaiting
    name, command = Takeover("mcts", 0.05).choose(table, seat, "g")
    assert name == "mcts" and command in tbl.game_of(table).legal_commands(table.state, seat)



async def test_a_timeout_sent_by_a_worker_whose_clock_runs_ahead_is_refused_then_fired_again_under_its_id(
        engine, store, redis):
    """The engine's clock decides: a Timeout it finds early is refused (not_due) and that refusal is not its id's
    answer for good: the same command, sent again once the deadline has passed, times the seat out."""
    turn = await started(engine, "g", {"per_decision": 0.5, "on_timeout": "forfeit"})
    deadline = await store.deadline("g")
    commands, clock = Commands(redis), worker(redis, store, retry_s=0.2)
    assert await clock.fire_due(deadline + 0.01) == 1  # this worker's clock is half a second ahead
    [(_, early)] = await commands.read()
    [refused] = await engine.handle([early])
    assert refused.status == "rejected" and refused.code == "not_due"
    await wait_until(await store.deadline("g"))  # the deadline passed, and the worker's retry delay
    assert await clock.fire_due() == 1
    [(_, again)] = await commands.read()
    assert again.command_id == early.command_id == f"clock:{(await engine.load('g')).table.version}:timeout:{turn}"
    [accepted] = await engine.handle([again])
    assert accepted.status == "accepted"
    assert (await types(store, "g")).count("table.SeatTimedOut") == 1


async def test_a_game_timer_is_sent_as_a_tick_by_two_workers_and_ticks_once(engine, store, redis, toy_games):
    await started(engine, "t", {}, game="toytimed", timer=0.05)
    table = (await engine.load("t")).table
    assert table.timer is not None and await store.deadline("t") == pytest.approx(table.timer.due, abs=1e-6)
    await wait_until(table.timer.due)
    now, score = time.time(), await store.deadline("t")
    first, second = worker(redis, store), worker(redis, store)
    assert await first.fire("t", score, now) == 1 and await second.fire("t", score, now) == 1
    entries = await Commands(redis).read()
    assert {e.command_id for _, e in entries} == {f"clock:{table.version}:tick:"}
    body = msgspec.json.decode(entries[0][1].body)
    assert body == {"type": "table.Tick", "key": table.timer.key, "due": table.timer.due}
    await engine.handle([e for _, e in entries], [i for i, _ in entries])
    assert (await types(store, "t")).count("toy.Ticked") == 1
    after = (await engine.load("t")).table
    assert after.timer is not None and after.timer.key != table.timer.key  # the next one runs
    assert await store.deadline("t") == pytest.approx(after.timer.due, abs=1e-6)


async def test_the_commands_sent_and_their_lateness_are_metrics(engine, store, redis):
    from prometheus_client import REGISTRY

    def sent(kind: str) -> float:
        return REGISTRY.get_sample_value("souk_clock_commands_total", {"kind": kind}) or 0.0

    def observed(kind: str) -> float:
        return REGISTRY.get_sample_value("souk_clock_lateness_seconds_count", {"kind": kind}) or 0.0

    before, seen = sent("timeout"), observed("timeout")
    await started(engine, "g", {"per_decision": 0.05, "on_timeout": "forfeit"})
    await wait_until(await store.deadline("g"))
    await worker(redis, store).fire_due()
    assert sent("timeout") == before + 1 and observed("timeout") == seen + 1


async def test_a_worker_waits_until_the_next_due_instant_or_its_poll_whichever_comes_first(store, redis):
    clock = worker(redis, store, poll_s=0.5)
    assert await clock.pause() == 0.5  # nothing in the index
    await redis.zadd(keys.deadlines(0), {"soon": time.time() + 0.1})
    assert 0.05 < await clock.pause() <= 0.1
    await redis.zadd(keys.deadlines(0), {"past": time.time() - 5})
    assert await clock.pause() == 0.001
    await redis.zrem(keys.deadlines(0), "soon", "past")
    await redis.zadd(keys.deadlines(0), {"later": time.time() + 60})
    assert await clock.pause() == 0.5


async def test_a_games_deadline_is_in_its_partitions_index_and_only_that_partitions_worker_fires_it(
        engine, store, redis):
    """With four partitions, the engine's append, the store's read, the worker's poll and its sends all use the
    deadline index of the game's partition (``keys.game_deadlines``), and its command goes to that partition's
    command stream."""
    keys.use(4)
    game_id = next(g for g in (f"g{n}" for n in range(100)) if keys.partition(g) == 3)
    await started(engine, game_id, {"per_decision": 0.05, "on_timeout": "forfeit"})
    assert await redis.zscore(keys.deadlines(0), game_id) is None
    due = await redis.zscore(keys.deadlines(3), game_id)
    assert due is not None and await store.deadline(game_id) == due
    await wait_until(due)
    assert await worker(redis, store, partitions=(0, 1, 2)).fire_due() == 0  # other partitions' worker: not its game
    assert await worker(redis, store).fire_due() == 1  # every partition's
    [(_, sent)] = [(i, command_envelope_decoder.decode(f[b"c"])) for i, f in await redis.xrange(keys.commands(3))]
    assert msgspec.json.decode(sent.body)["type"] == "table.Timeout"
    assert await redis.zscore(keys.deadlines(3), game_id) > due  # looked at again after the retry delay
    [reply] = await engine.handle([sent])
    assert reply.status == "accepted"
    assert await redis.zscore(keys.deadlines(3), game_id) is None  # over: out of its index


async def test_a_pass_that_raises_what_is_not_a_store_error_is_logged_and_the_clock_goes_on(engine, store, redis):
    """Anything a pass raises (here an ``AttributeError``, as redis-py's cluster client raised on an ASK to a node it
    had not met) is logged and the pass tried again after ``retry_s``: before, only Redis' and the OS's errors were,
    and any other ended the clock's task for good, silently (every clocked game's deadlines then never fired)."""
    await started(engine, "g", {"per_decision": 0.05, "on_timeout": "forfeit"})
    clock = worker(redis, store, poll_s=0.01, retry_s=0.05)
    real, failures = clock.fire_due, []

    async def failing_once(now=None):
        if not failures:
            failures.append(1)
            raise AttributeError("'NoneType' object has no attribute 'name'")
        return await real(now)

    clock.fire_due = failing_once
    running = asyncio.create_task(clock.run())
    try:
        deadline = time.monotonic() + 5
        while clock.sent == 0 and not running.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert not running.done(), running.exception()
        assert failures and clock.sent == 1  # the timeout, sent after the failed pass
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
