"""Forks (issue #10 section 3), through the engine and the store, for every game the kernel registers.

Given a finished game (played with random legal commands and a few undos), when it is forked at a version, then
the fork's first events replay the source's position (the live game events up to there, undone ones left out),
it waits for new seats, and once they are taken its game is the source's game at that version (every deck as it
was: the whole state is equal), with its own seed (a new commitment) mixed with its own seats' entropy: the
fork plays on to its end and its record verifies on its own. What cannot be forked is refused with its code.
"""

from __future__ import annotations

import random
import secrets
import time
from typing import Any

import msgspec
import pytest

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, GameStarted, JoinSeat, RequestUndo
from domain import table as tbl
from domain.kernel import bot_command
from domain.kernel import games
from services.engine.service import Engine
from services.history import record as records
from services.history.fork import ForkRefused, fork_of, position_version
from services.history.verify import verify_record
from services.store.codec import decode_stream, encoder, fold_stream
from services.store.events import RedisEventStore

pytestmark = pytest.mark.anyio


def envelope(game_id: str, body: Any, seat: int | None = None, token: str | None = None) -> CommandEnvelope:
    return CommandEnvelope(secrets.token_hex(8), game_id, msgspec.Raw(encoder.encode(body)), seat=seat,
                           token_hash=token, sent_at=time.time())


def token(game_id: str, seat: int) -> str:
    return f"{abs(hash((game_id, seat))):064x}"[-64:]


async def seat_all(engine: Engine, game_id: str, seats: int, rng: random.Random) -> None:
    replies = await engine.handle([envelope(game_id, JoinSeat(f"p{s}", token(game_id, s), s,
                                                              entropy=rng.randbytes(32).hex())) for s in range(seats)])
    assert all(r.status == "accepted" for r in replies), replies


async def play_to_the_end(engine: Engine, game_id: str, rng: random.Random, undo_rate: float = 0.0) -> int:
    """Random legal commands (and, at ``undo_rate``, a seat taking back its own last move) until the end;
    returns the undos granted."""
    undos = 0
    for _ in range(20_000):
        table = (await engine.load(game_id)).table
        if table.status != tbl.PLAYING:
            return undos
        seat = rng.choice(tbl.flow(table).awaiting)
        targets = tbl.undo_targets(table, seat)
        if targets and rng.random() < undo_rate:
            command: Any = RequestUndo(targets[0])
        else:
            command = bot_command(tbl.game_of(table), table.state, seat, rng)
        [reply] = await engine.handle([envelope(game_id, command, seat, token(game_id, seat))])
        assert reply.status == "accepted", reply
        undos += isinstance(command, RequestUndo)
    raise AssertionError("the game did not end")


async def finished_game(engine: Engine, name: str, seats: int, rng: random.Random, undo_rate: float = 0.3) -> str:
    game_id = f"src-{name}-{rng.randrange(10**6)}"
    [created] = await engine.handle([envelope(game_id, CreateGame(name, f"{name} source", seats))])
    assert created.status == "accepted", created
    await seat_all(engine, game_id, seats, rng)
    await play_to_the_end(engine, game_id, rng, undo_rate)
    return game_id


@pytest.fixture
async def engine(stores):
    events, _ = stores
    return Engine(events, RedisEventStore(events))


@pytest.mark.parametrize("name", sorted(games()))
async def test_a_fork_starts_from_the_sources_position_with_new_seats_and_its_own_chance(engine, name):
    game = games()[name]
    rng = random.Random(f"fork {name}")
    source = await finished_game(engine, name, game.min_seats, rng)
    envelopes = await engine.store.read(source)
    tables = [tbl.EMPTY]  # tables[v]: the source at version v
    for env, event in zip(envelopes, decode_stream(envelopes)):
        tables.append(tbl.evolve(tables[-1], event, tbl.Origin(env.seat, env.command_id)))
    positions = [v for v in range(1, len(envelopes)) if tables[position_version(envelopes, v)].status == tbl.PLAYING]
    forks = 0
    for version in sorted({positions[0], rng.choice(positions), positions[-1]}):
        position = tables[position_version(envelopes, version)]
        fork_id = f"fork-{name}-{version}"
        body = fork_of(source, envelopes, version, None)
        [created] = await engine.handle([envelope(fork_id, body)])
        assert created.status == "accepted", created
        opened = (await engine.load(fork_id)).table
        # given the fork created: its first events replay the position; it waits for its own players
        assert opened.status == tbl.OPEN and opened.forked_from.game_id == source
        assert opened.forked_from.version == version and all(p is None for p in opened.players)
        assert opened.state == position.state
        # when its seats are taken: the game is the source's at that version, every deck as it was
        await seat_all(engine, fork_id, game.min_seats, rng)
        fork = (await engine.load(fork_id)).table
        assert fork.status == tbl.PLAYING and fork.state == position.state
        assert tbl.flow(fork) == tbl.flow(position)
        # with its own chance: another server seed, mixed with its own seats' entropy
        fork_events = decode_stream(await engine.store.read(fork_id))
        source_events = decode_stream(envelopes)
        assert fork_events[0].seed_hash != source_events[0].seed_hash
        assert [e for e in fork_events if isinstance(e, GameStarted)][0].chance_hash != \
            [e for e in source_events if isinstance(e, GameStarted)][0].chance_hash
        # then it plays to its end and its record verifies alone (its CreateGame holds the position)
        await play_to_the_end(engine, fork_id, rng)
        stored, commands = await engine.store.read_with_commands(fork_id)
        record = records.make(fork_id, stored, bytes.fromhex(fork_events_end_seed(stored)), commands=commands)
        assert record.header.forked_from.game_id == source and record.header.forked_from.version == version
        verdict = verify_record(record)
        assert verdict.ok, verdict
        forks += 1
    assert forks >= 2


def fork_events_end_seed(stored) -> str:
    return msgspec.json.decode(stored[-1].payload)["seed"]


async def test_a_position_with_undone_moves_before_it_is_replayed_without_them(engine):
    """Given a source where undos took moves back, the fork's position holds only the moves still live then."""
    rng = random.Random(3)
    for attempt in range(10):
        source = await finished_game(engine, "yspahan", 2, rng, undo_rate=0.5)
        envelopes = await engine.store.read(source)
        table = fold_stream(envelopes)
        if table.undone:
            break
    else:
        raise AssertionError("no game with an undo in 10")
    last_undo = table.undone[-1].last + 1  # the UndoApplied
    version = position_version(envelopes, min(last_undo + 1, len(envelopes) - 2))
    body = fork_of(source, envelopes, version, "after an undo")
    undone = {v for r in tbl.undone_ranges(decode_stream(envelopes[:version])) for v in range(r.first, r.last + 1)}
    replayed = len(body.fork.events)
    game_events = [e for e in envelopes[:version] if not e.type.startswith("table.")]
    assert replayed == len([e for e in game_events if e.seq not in undone]) < len(game_events)
    [created] = await engine.handle([envelope("fork-undo", body)])
    assert created.status == "accepted"
    assert (await engine.load("fork-undo")).table.state == fold_stream(envelopes[:version]).state


async def test_what_cannot_be_forked_is_refused_with_its_code(engine):
    rng = random.Random(4)
    source = await finished_game(engine, "yspahan", 2, rng, undo_rate=0)
    envelopes = await engine.store.read(source)
    started = next(e.seq for e, ev in zip(envelopes, decode_stream(envelopes)) if isinstance(ev, GameStarted))
    cases = {0: "bad_version", len(envelopes) + 1: "bad_version", 2: "not_a_position", started: "not_a_position",
             len(envelopes): "not_a_position"}
    for version, code in cases.items():
        with pytest.raises(ForkRefused) as refused:
            fork_of(source, envelopes, version, None)
        assert refused.value.code == code, version
    running = f"running-{rng.randrange(10**6)}"
    await engine.handle([envelope(running, CreateGame("yspahan", "running", 2))])
    await seat_all(engine, running, 2, rng)
    with pytest.raises(ForkRefused) as refused:
        fork_of(running, await engine.store.read(running), 5, None)
    assert (refused.value.status, refused.value.code) == (409, "game_not_over")


async def test_a_fork_whose_position_is_not_one_of_its_game_is_refused_and_nothing_is_kept(engine):
    rng = random.Random(5)
    source = await finished_game(engine, "yspahan", 2, rng, undo_rate=0)
    envelopes = await engine.store.read(source)
    body = fork_of(source, envelopes, len(envelopes) // 2, None)
    bad = msgspec.structs.replace(body, fork=msgspec.structs.replace(body.fork, events=({"type": "samarkand.X"},)))
    [reply] = await engine.handle([envelope("bad-fork", bad)])
    assert (reply.status, reply.code) == ("rejected", "bad_fork")
    assert await engine.store.read("bad-fork") == []
    empty = msgspec.structs.replace(body, fork=msgspec.structs.replace(body.fork, events=()))
    [reply] = await engine.handle([envelope("bad-fork", empty)])
    assert reply.code == "bad_fork"


def test_a_mid_command_version_is_the_position_before_that_command():
    """As time travel answers it: the join that starts the game and its setup are one command."""
    from contracts.envelope import EventEnvelope

    def env(seq: int, command: str) -> EventEnvelope:
        return EventEnvelope(seq=seq, game_id="g", type="t", command_id=command, recorded_at=float(ord(command[0])),
                             payload=msgspec.Raw(b"{}"), seat=None, prev_hash="")

    stream = [env(1, "a"), env(2, "b"), env(3, "c"), env(4, "c"), env(5, "c"), env(6, "d")]
    assert [position_version(stream, v) for v in range(1, 7)] == [1, 2, 2, 2, 5, 6]


async def test_a_fork_of_a_clocked_game_is_clocked_alike(engine):
    """The table's options go with the position: the undo policy and the clocks (both taken out of the game's
    options at creation), so a fork plays on as its source was played."""
    from contracts.table import ClockOptions, Resign

    clock = {"per_decision": 60.0, "reserve": 30.0, "increment": 5.0, "on_timeout": "absent"}
    rng = random.Random("fork clocked")
    create = CreateGame("yspahan", "clocked", 2, {"clock": clock, "undo": "none"}, "00ff" * 16, unfair=True)
    [reply] = await engine.handle([envelope("clocked", create)])
    assert reply.status == "accepted", reply
    await seat_all(engine, "clocked", 2, rng)
    for _ in range(3):  # a few moves, then a resignation ends it
        table = (await engine.load("clocked")).table
        [seat] = tbl.game_of(table).flow(table.state).awaiting
        command = tbl.game_of(table).legal_commands(table.state, seat)[0]
        [reply] = await engine.handle([envelope("clocked", command, seat, token("clocked", seat))])
        assert reply.status == "accepted", reply
    [reply] = await engine.handle([envelope("clocked", Resign(), 0, token("clocked", 0))])
    assert reply.status == "accepted", reply
    envelopes = await engine.store.read("clocked")
    body = fork_of("clocked", envelopes, len(envelopes) - 3, None)
    assert body.options["clock"] == clock and body.options["undo"] == "none"
    [created] = await engine.handle([envelope("fork", body)])
    assert created.status == "accepted", created
    await seat_all(engine, "fork", 2, rng)
    fork = (await engine.load("fork")).table
    assert fork.status == tbl.PLAYING and tbl.clock_view(fork).options == ClockOptions(**clock)
    assert await engine.store.deadline("fork") == tbl.next_due(fork)  # its clock runs
